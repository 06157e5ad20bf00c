/**
 * Issue 23, item 7: a provider that ignores maxOutputTokens and never ends its answer. Prints how many
 * characters Cadre read, how long the call lasted and how much the process grew before it was ended.
 * `node bench/runaway-model.ts [maxOutputTokens] [modelCallTimeoutSeconds]`
 */
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { agentDefinitionSchema } from '../src/core/agent-definition.ts';
import { Runtime } from '../src/core/runtime.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';

const maxOutputTokens = Number(process.argv[2] ?? 4096);
const timeoutSeconds = Number(process.argv[3] ?? 20);
let sent = 0;
const chunk = 'x'.repeat(64 * 1024);
const model: LanguageModelV4 = {
  specificationVersion: 'v4',
  provider: 'hostile',
  modelId: 'endless',
  supportedUrls: {},
  doGenerate: () => Promise.reject(new Error('stream only')),
  doStream: async () => {
    let started = false;
    return {
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          if (!started) {
            started = true;
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'text-start', id: 't' });
            return;
          }
          await new Promise((resolve) => setImmediate(resolve));
          sent += chunk.length;
          controller.enqueue({ type: 'text-delta', id: 't', delta: chunk });
        },
      }),
    };
  },
};
const runtime = new Runtime({
  agents: new Map([['solo', agentDefinitionSchema.parse({ name: 'solo', description: 's', tools: [] })]]),
  tools: new ToolRegistry([]),
  resolveModel: () => model,
  mainModel: 'hostile:endless',
  limits: {
    maxOutputTokens,
    modelCallTimeoutMs: timeoutSeconds * 1000,
    timeoutMs: (timeoutSeconds + 10) * 1000,
  },
});
const rssBefore = process.memoryUsage().rss;
let peak = rssBefore;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 50);
const started = performance.now();
const { envelope } = await runtime.run({ agent: 'solo', task: 'talk' });
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
console.log(
  JSON.stringify({
    maxOutputTokens,
    status: envelope.status,
    summary: envelope.summary.slice(0, 160),
    charsRead: sent,
    seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    rssGrowthMB: Number(mb(peak - rssBefore)),
  }),
);
