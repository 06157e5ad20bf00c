import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import type { CadreEvent } from './events.ts';
import { outputReturned } from './output-json.ts';
import { Runtime } from './runtime.ts';
import { boundedModelOutput, jsonOutput } from './tool-bindings.ts';
import { ToolRegistry } from './tool-registry.ts';

/** A runtime whose main agent, on `model`, may call the one tool `tool` of `registry`. */
function mainRuntime(
  tool: string,
  registry: ToolRegistry,
  model: ScriptedModel,
  limits?: { maxToolOutputChars: number },
) {
  return new Runtime({
    agents: new Map([
      [
        'main',
        agentDefinitionSchema.parse({ name: 'main', description: 'm', instructions: 'M', tools: [tool] }),
      ],
    ]),
    tools: registry,
    resolveModel: () => model,
    mainModel: 'scripted:x',
    ...(limits ? { limits } : {}),
  });
}

describe('boundedModelOutput', () => {
  it('measures an object a tool returned again after changing it as it is now, in the same turn', () => {
    const notes = { items: ['a'.repeat(50)] };
    expect(boundedModelOutput(notes, 80).type).toBe('json');
    notes.items.push('b'.repeat(50));
    outputReturned(notes);
    expect(boundedModelOutput(notes, 80)).toMatchObject({
      type: 'text',
      value: expect.stringContaining('[output truncated'),
    });
  });

  it('keeps a tool that returns the object it keeps changing to the run’s output limit', async () => {
    // A tool that hands back its own state, and a model that answers in process (no I/O between steps).
    const notes = { items: [] as string[] };
    const registry = new ToolRegistry([
      {
        name: 'add_note',
        family: 'test',
        description: 'adds a note and returns them all',
        input: z.object({ text: z.string() }),
        execute: async ({ text }: { text: string }) => {
          notes.items.push(text.repeat(50));
          return notes;
        },
      },
    ]);
    const model = new ScriptedModel((request) =>
      request.index < 2
        ? { toolCalls: [{ name: 'add_note', input: { text: request.index === 0 ? 'a' : 'b' } }] }
        : { text: 'done' },
    );
    const runtime = mainRuntime('add_note', registry, model, { maxToolOutputChars: 80 });
    await runtime.run({ agent: 'main', task: 'q' });
    // The second result's JSON is over 80 characters: the model is shown it cut, not whole.
    expect(model.calls[2]!.toolResults[0]!.output).toEqual(expect.stringContaining('[output truncated'));
  });
});

describe('jsonOutput', () => {
  const cyclic = () => {
    const node: Record<string, unknown> = { name: 'a' };
    node.self = node;
    return node;
  };
  const outputs: Array<[string, () => unknown, string]> = [
    ['a cycle', cyclic, 'Converting circular structure to JSON'],
    ['a BigInt inside', () => ({ count: 10n }), 'BigInt'],
    ['a function', () => () => 1, 'a function has no JSON form'],
  ];

  for (const [what, make, reason] of outputs) {
    for (const journaled of [false, true]) {
      it(`fails the call, not the run, when a tool returns ${what}${journaled ? ' (journaled)' : ''}`, async () => {
        const registry = new ToolRegistry([
          {
            name: 'odd',
            family: 'test',
            description: 'returns something that is not JSON',
            input: z.object({}),
            execute: async () => make(),
          },
        ]);
        const model = new ScriptedModel((request) =>
          request.index === 0
            ? { toolCalls: [{ name: 'odd', input: {} }] }
            : { text: `saw: ${String(request.toolResults[0]?.output)}` },
        );
        const runtime = mainRuntime('odd', registry, model);
        const puts: unknown[] = [];
        const journal = { get: () => undefined, put: (...entry: unknown[]) => void puts.push(entry[3]) };
        const events: CadreEvent[] = [];
        runtime.bus.subscribe((event) => events.push(event));
        const outcome = await runtime.run({
          agent: 'main',
          task: 'q',
          ...(journaled ? { record: { journal } } : {}),
        });

        expect(outcome.envelope.status).toBe('ok');
        const said = 'odd returned an output that is not JSON';
        expect(outcome.envelope.summary).toContain(said);
        expect(outcome.envelope.summary).toContain(reason);
        const result = events.find((event) => event.type === 'tool-result');
        expect(result).toMatchObject({ ok: false, error: expect.stringContaining(said) });
        if (journaled) expect(puts).toContainEqual({ ok: false, error: expect.stringContaining(said) });
      });
    }
  }

  it('passes plain data through untouched', () => {
    const output = { rows: [1, 2], note: 'x' };
    expect(jsonOutput('t', output)).toBe(output);
    expect(jsonOutput('t', 'text')).toBe('text');
    expect(jsonOutput('t', undefined)).toBeUndefined();
  });
});

describe('warming a tool', () => {
  it('starts what a tool needs once the run’s first model request is on its way, before the model answers', async () => {
    const warmed: string[] = [];
    const tool = (name: string) => ({
      name,
      family: 'test',
      description: name,
      input: z.object({}),
      execute: async () => ({}),
      warm: () => warmed.push(name),
    });
    const registry = new ToolRegistry([tool('held'), tool('not_held')]);
    let warmedAtRequest: string[] | undefined;
    let warmedBeforeAnswer: string[] = [];
    const model = new ScriptedModel(async () => {
      // A worker booting meanwhile would compete with the request itself on a small machine.
      warmedAtRequest ??= [...warmed];
      // The earliest a model over a network answers: a turn of the event loop after the request.
      await new Promise((resolve) => setTimeout(resolve, 0));
      warmedBeforeAnswer = [...warmed];
      return { text: 'done' };
    });
    await mainRuntime('held', registry, model).run({ agent: 'main', task: 'go' });
    expect(warmedAtRequest).toEqual([]);
    expect(warmedBeforeAnswer).toEqual(['held']);
  });
});
