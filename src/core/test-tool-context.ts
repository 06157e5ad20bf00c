import type { CadreTool, ToolContext } from './tool.ts';
import { Vault } from './vault.ts';

/**
 * A tool context for calling a tool's `execute` directly in a test: its own vault, a live signal, user
 * `local`, no nested calls. Override any field.
 */
export function testToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    runId: 'run_test',
    agent: 'test',
    depth: 1,
    signal: new AbortController().signal,
    vault: new Vault(),
    userId: 'local',
    sessionId: undefined,
    inputs: {},
    callTool: async (name) => {
      throw new Error(`no nested tool calls in this test (asked for ${name})`);
    },
    allowedTools: () => [],
    emit: () => {},
    ...overrides,
  };
}

/** Calls tools from a list by name, validating input as the runtime does, in one test context. */
export function toolCaller(tools: Iterable<CadreTool>, context: ToolContext = testToolContext()) {
  const byName = new Map([...tools].map((tool) => [tool.name, tool]));
  return (name: string, input: unknown): Promise<any> => {
    const tool = byName.get(name);
    if (!tool) return Promise.reject(new Error(`no tool named "${name}" in this test`));
    return tool.execute(tool.input.parse(input), context);
  };
}
