import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { type CadreTool, defineTool, type ToolContext } from '../../core/tool.ts';
import { vaultGetTool, vaultSetTool } from '../compute/vault.ts';
import type { SandboxLimits } from './protocol.ts';
import { runSandboxed } from './sandbox.ts';

const MAX_CODE_CHARS = 50_000;
/** The run's own vault is always reachable inside, even when the agent was not given the vault tools. */
const VAULT_TOOLS: CadreTool[] = [vaultSetTool, vaultGetTool];

export interface RunJsOptions {
  /** Finds another tool by name, for the descriptions and input schemas `help()` returns inside. */
  lookup: (name: string) => CadreTool | undefined;
  limits?: Partial<SandboxLimits>;
}

/**
 * `run_js {code}`: model-written JavaScript in QuickJS (see sandbox.ts), where the calling agent's other
 * allowed tools are async functions (code mode) and nothing else from the host exists.
 */
export function createRunJsTool(options: RunJsOptions) {
  return defineTool({
    name: 'run_js',
    family: 'compute',
    description:
      'Run JavaScript in an isolated sandbox (QuickJS; no network, files, process or imports) and get back its ' +
      'return value as JSON plus console output. Use it for exact computation, data processing, and to call ' +
      'your other tools in a loop in one step: each of your tools is an async function of the same name taking ' +
      'the same input object, e.g. `const r = await calculate({expression: "2^64"})`; vault_set({key, value}) ' +
      'and vault_get({key}) reach your scratch vault; help() lists the functions. End with `return value` ' +
      '(top-level await works) or a final expression. Limits: 30 s, 64 MB, no timers beyond a few setTimeouts.',
    input: z.object({ code: z.string().min(1).max(MAX_CODE_CHARS).describe('JavaScript source') }),
    async execute({ code }, context) {
      const allowed = new Set(context.allowedTools().filter((name) => name !== 'run_js'));
      const toolNames = [...new Set([...allowed, ...VAULT_TOOLS.map((tool) => tool.name)])].sort();
      // Tool calls the code started end with the sandbox: a killed or finished run_js leaves none running.
      const sandboxGone = new AbortController();
      const result = await runSandboxed({
        code,
        toolNames,
        toolHelp: toolNames.map((name) => describe(name, options.lookup(name))),
        callTool: (name, input) => callFromSandbox(context, allowed, name, input, sandboxGone.signal),
        signal: context.signal,
        ...(options.limits ? { limits: options.limits } : {}),
      }).finally(() =>
        sandboxGone.abort(
          new ModelBehaviorError('tool_input', 'run_js ended before this tool call finished'),
        ),
      );
      const consoleTail = result.droppedConsoleChars
        ? `${result.console}\n[console output cut: ${result.droppedConsoleChars} more characters]`
        : result.console;
      if (!result.ok) {
        throw new ModelBehaviorError(
          'tool_input',
          consoleTail ? `${result.error}\nconsole output:\n${consoleTail}` : result.error,
        );
      }
      return { result: result.value, ...(consoleTail ? { console: consoleTail } : {}), ms: result.ms };
    },
  });
}

function callFromSandbox(
  context: ToolContext,
  allowed: Set<string>,
  name: string,
  input: unknown,
  signal: AbortSignal,
) {
  if (allowed.has(name)) return context.callTool(name, input, { signal });
  const vaultTool = VAULT_TOOLS.find((tool) => tool.name === name);
  if (!vaultTool) throw new ModelBehaviorError('tool_input', `no tool named "${name}" is available here`);
  const parsed = vaultTool.input.safeParse(input);
  if (!parsed.success)
    throw new ModelBehaviorError(
      'tool_input',
      `invalid input for ${name}: ${parsed.error.issues[0]?.message}`,
    );
  return vaultTool.execute(parsed.data, context);
}

function describe(name: string, tool: CadreTool | undefined) {
  if (!tool) return { name };
  let input: unknown;
  try {
    input = z.toJSONSchema(tool.input, { unrepresentable: 'any' });
  } catch {
    input = undefined;
  }
  return { name, description: tool.description, ...(input ? { input } : {}) };
}
