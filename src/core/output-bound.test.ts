import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { expect, it } from 'vitest';
import { agentDefinitionSchema } from './agent-definition.ts';
import { outputCharLimit } from './output-bound.ts';
import { Runtime } from './runtime.ts';
import { ToolRegistry } from './tool-registry.ts';

/** A provider that ignores maxOutputTokens and never ends its answer: 64 KB of text per part. */
function endlessModel() {
  const sent = { chars: 0 };
  const chunk = 'x'.repeat(64 * 1024);
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'hostile',
    modelId: 'endless',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('stream only')),
    doStream: async () => {
      let started = false;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        pull(controller) {
          if (!started) {
            started = true;
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'text-start', id: 't' });
            return;
          }
          sent.chars += chunk.length;
          controller.enqueue({ type: 'text-delta', id: 't', delta: chunk });
        },
      });
      return { stream };
    },
  };
  return { model, sent };
}

it('ends a model stream that runs past maxOutputTokens and a margin, with a clear error', async () => {
  const { model, sent } = endlessModel();
  const runtime = new Runtime({
    agents: new Map([['solo', agentDefinitionSchema.parse({ name: 'solo', description: 's', tools: [] })]]),
    tools: new ToolRegistry([]),
    resolveModel: () => model,
    mainModel: 'hostile:endless',
    limits: { maxOutputTokens: 1000, modelCallTimeoutMs: 60_000, timeoutMs: 60_000 },
  });
  const started = performance.now();
  const { envelope } = await runtime.run({ agent: 'solo', task: 'talk' });
  const ms = performance.now() - started;
  expect(envelope.status).toBe('error');
  expect(envelope.summary).toMatch(/past its limit of 1,000 output tokens \(limits\.maxOutputTokens\)/);
  // Read no further than the bound and one part past it; before, it read until the call's time limit.
  expect(sent.chars).toBeLessThanOrEqual(outputCharLimit(1000) + 2 * 64 * 1024);
  expect(ms).toBeLessThan(10_000);
});
