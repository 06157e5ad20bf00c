import { z } from 'zod';
import { type AgentDefinitionInput, agentDefinitionSchema } from '../../src/core/agent-definition.ts';
import type { CadreEvent } from '../../src/core/events.ts';
import type { RuntimeLimits } from '../../src/core/limits.ts';
import type { RunTree } from '../../src/core/run-tree.ts';
import { Runtime } from '../../src/core/runtime.ts';
import { defineTool } from '../../src/core/tool.ts';
import { ToolRegistry } from '../../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../../src/models/scripted-model.ts';

/** The runtime tests' tools, agents and set-up (src/core/runtime-*.test.ts). */

/** Texts the echo tool (and the secret tool) ran with, in order: what tests check was really executed. */
export const executed: string[] = [];
export const echo = defineTool({
  name: 'echo',
  family: 'test',
  description: 'Echo the text',
  input: z.object({ text: z.string() }),
  async execute({ text }) {
    executed.push(text);
    return { text };
  },
});
export const secret = defineTool({
  name: 'secret',
  family: 'test',
  description: 'Never offered to the child',
  input: z.object({}),
  async execute() {
    executed.push('secret');
    return 'leaked';
  },
});
export const slow = defineTool({
  name: 'slow',
  family: 'test',
  description: 'Waits until aborted',
  input: z.object({}),
  execute: (_input, context) =>
    new Promise((_resolve, reject) =>
      context.signal.addEventListener('abort', () => reject(context.signal.reason)),
    ),
});

/** An agent definition with a recognisable "I am NAME." instruction. */
export function agent(input: Partial<AgentDefinitionInput> & { name: string }) {
  return agentDefinitionSchema.parse({
    description: `the ${input.name} agent`,
    instructions: `I am ${input.name}.`,
    ...input,
  });
}

/** Which agent a scripted request comes from, read from its instructions. */
export const whoIs = (request: ScriptedRequest) => request.system.match(/I am (\w+)\./)?.[1] ?? 'unknown';

/** A runtime over the echo, secret and slow tools whose model answers with `script`; every event collected. */
export function setup(
  script: (request: ScriptedRequest, who: string) => ScriptedReply | Promise<ScriptedReply>,
  definitions: ReturnType<typeof agent>[],
  limits: Partial<RuntimeLimits> = {},
) {
  const model = new ScriptedModel((request) => script(request, whoIs(request)));
  const events: CadreEvent[] = [];
  const runtime = new Runtime({
    agents: new Map(definitions.map((definition) => [definition.name, definition])),
    tools: new ToolRegistry([echo, secret, slow]),
    resolveModel: () => model,
    mainModel: 'scripted:test',
    limits,
  });
  runtime.bus.subscribe((event) => events.push(event));
  return { model, runtime, events };
}

/** The index-th child of a run tree. */
export const child = (tree: RunTree, index = 0) => tree.children[index]!;
