import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import { guardModel } from './guarded-model.ts';
import { Runtime } from './runtime.ts';
import { nestingDepth } from './tool-call-bounds.ts';
import { ToolRegistry } from './tool-registry.ts';

describe('tool call bounds', () => {
  it('measures nesting without recursion, ignoring brackets inside strings', () => {
    expect(nestingDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(nestingDepth('"\\"[["')).toBe(0);
    expect(nestingDepth(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`)).toBe(1_000_000);
    expect(nestingDepth(`${'['.repeat(1_000_000)}`, 10)).toBe(11);
  });

  it('never runs a refused call, even for a tool whose inputs are all optional', async () => {
    let ran = 0;
    const registry = new ToolRegistry([
      {
        name: 'anything',
        family: 'test',
        description: 'accepts any object',
        input: z.object({ note: z.string().optional() }),
        execute: async () => {
          ran++;
          return 'ran';
        },
      },
    ]);
    const deep = `{"note":"x","extra":${'['.repeat(2_000)}${']'.repeat(2_000)}}`;
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'anything', rawInput: deep },
          { name: 'anything', input: {} },
        ],
      },
      { text: 'done' },
    ]);
    const runtime = new Runtime({
      agents: new Map([
        ['solo', agentDefinitionSchema.parse({ name: 'solo', description: 's', tools: ['anything'] })],
      ]),
      tools: registry,
      resolveModel: () => model,
      mainModel: 'scripted:x',
      limits: { maxToolCallsPerStep: 1 },
    });
    const { envelope, tree } = await runtime.run({ agent: 'solo', task: 'go' });
    expect(envelope.status).toBe('ok');
    expect(ran).toBe(0);
    expect(tree.toolCalls.map((call) => call.refused)).toEqual([
      expect.stringMatching(/more than 64 levels deep/),
      expect.stringMatching(/at most 1 tool calls per step, and this response asked for 2; the 1 past/),
    ]);
    expect(JSON.stringify(model.calls[1]!.toolResults)).toMatch(/more than 64 levels deep/);
  });
});

describe('tool errors repeated to the model', () => {
  it('are cut to 2,000 characters in later requests; a prompt with none too long is passed as it is', async () => {
    const seen: unknown[] = [];
    const inner = {
      specificationVersion: 'v4',
      provider: 'test',
      modelId: 'm',
      supportedUrls: {},
      doGenerate: async () => {
        throw new Error('unused');
      },
      doStream: async (params: { prompt: unknown }) => {
        seen.push(params.prompt);
        return { stream: new ReadableStream({ start: (controller) => controller.close() }) };
      },
    } as unknown as LanguageModelV4;
    const bounded = guardModel(inner, {
      bounds: { maxToolInputChars: 1e6, maxToolInputDepth: 100, maxToolCallsPerStep: 10 },
      onRefused: () => {},
      timeoutMs: 60_000,
      usage: {},
    });
    const toolMessage = (value: string) => ({
      role: 'tool' as const,
      content: [
        {
          type: 'tool-result' as const,
          toolCallId: 'c',
          toolName: 't',
          output: { type: 'error-text' as const, value },
        },
      ],
    });
    const short: LanguageModelV4Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      toolMessage('bad input'),
    ];
    await bounded.doStream({ prompt: short } as Parameters<LanguageModelV4['doStream']>[0]);
    const long: LanguageModelV4Prompt = [toolMessage('x'.repeat(10_000))];
    await bounded.doStream({ prompt: long } as Parameters<LanguageModelV4['doStream']>[0]);
    expect(seen[0]).toBe(short);
    const cut = (seen[1] as Array<{ content: Array<{ output: { value: string } }> }>)[0]!.content[0]!.output
      .value;
    expect(cut).toBe(`${'x'.repeat(2_000)}… [8,000 more characters not repeated]`);
    expect(long[0]).toEqual(toolMessage('x'.repeat(10_000)));
  });
});
