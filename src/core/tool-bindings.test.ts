import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import { outputReturned } from './output-json.ts';
import { Runtime } from './runtime.ts';
import { boundedModelOutput } from './tool-bindings.ts';
import { ToolRegistry } from './tool-registry.ts';

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
    const runtime = new Runtime({
      agents: new Map([
        [
          'main',
          agentDefinitionSchema.parse({
            name: 'main',
            description: 'm',
            instructions: 'M',
            tools: ['add_note'],
          }),
        ],
      ]),
      tools: registry,
      resolveModel: () => model,
      mainModel: 'scripted:x',
      limits: { maxToolOutputChars: 80 },
    });
    await runtime.run({ agent: 'main', task: 'q' });
    // The second result's JSON is over 80 characters: the model is shown it cut, not whole.
    expect(model.calls[2]!.toolResults[0]!.output).toEqual(expect.stringContaining('[output truncated'));
  });
});
