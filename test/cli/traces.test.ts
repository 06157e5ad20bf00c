import { afterEach, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/app/telemetry/index.ts';
import { EventBus } from '../../src/core/events.ts';
import type { RunTree } from '../../src/core/run-tree.ts';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { startOtlpReceiver } from '../fixtures/otlp-receiver.ts';
import { fixtureModelEnv } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
});

const isMain = (system: string) => system.includes('## When to delegate');
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");

describe('OpenTelemetry traces', () => {
  it('an OTLP receiver gets a trace whose span tree is the run tree, with GenAI attributes', async () => {
    const receiver = await startOtlpReceiver();
    const model = await startOpenAIServer(({ body, system }) => {
      const fromTool = body.messages.at(-1)?.role === 'tool';
      if (isMain(system)) {
        // Main's second call reads most of its prompt from the provider's cache and reasons a little.
        const cached = {
          prompt_tokens: 2000,
          completion_tokens: 50,
          prompt_tokens_details: { cached_tokens: 1500 },
          completion_tokens_details: { reasoning_tokens: 20 },
        };
        return fromTool
          ? { text: 'It is 391.', usage: cached }
          : { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
      }
      if (isMath(system)) {
        return fromTool
          ? { text: `17 * 23 = ${contentText(body.messages.at(-1)?.content)}` }
          : { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] };
      }
      return { status: 400 };
    });
    closers.push(receiver.close, model.close);
    const result = await cadreInProcess(['ask', '--json', 'What is 17 times 23?'], {
      ...fixtureModelEnv(model),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'cadre-test',
    });
    expect(result.code).toBe(0);
    const { run, sessionId } = JSON.parse(result.stdout) as { run: RunTree; sessionId: string };
    const math = run.children[0]!;
    await waitFor(() => receiver.spans.some((span) => span.name === 'invoke_agent main'));

    const byName = (name: string) => receiver.spans.filter((span) => span.name === name);
    const [mainSpan] = byName('invoke_agent main');
    const [mathSpan] = byName('invoke_agent math');
    const [delegation] = byName('execute_tool math');
    const [calculate] = byName('execute_tool calculate');
    const chats = byName('chat fixture');
    expect(receiver.spans.map((span) => span.name).sort()).toEqual(
      [
        'chat fixture',
        'chat fixture',
        'chat fixture',
        'chat fixture',
        'execute_tool calculate',
        'execute_tool math',
        'invoke_agent main',
        'invoke_agent math',
      ].sort(),
    );

    // One trace, nested exactly like the run tree.
    expect(new Set(receiver.spans.map((span) => span.traceId)).size).toBe(1);
    expect(mainSpan!.parentSpanId).toBeUndefined();
    expect(delegation!.parentSpanId).toBe(mainSpan!.spanId);
    expect(mathSpan!.parentSpanId).toBe(delegation!.spanId);
    expect(calculate!.parentSpanId).toBe(mathSpan!.spanId);
    const chatParents = chats.map((chat) => chat.parentSpanId).sort();
    expect(chatParents).toEqual(
      [mainSpan!.spanId, mainSpan!.spanId, mathSpan!.spanId, mathSpan!.spanId].sort(),
    );

    // GenAI semantic-convention attributes.
    expect(mainSpan!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'main',
      'gen_ai.agent.id': run.id,
      'gen_ai.conversation.id': sessionId,
      'gen_ai.request.model': 'fixture',
      'gen_ai.provider.name': 'compatible',
      'gen_ai.usage.input_tokens': run.usage.inputTokens,
      'gen_ai.usage.output_tokens': run.usage.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': 1500,
      'gen_ai.usage.reasoning.output_tokens': 20,
    });
    expect(run.usage).toMatchObject({ cacheReadTokens: 1500, reasoningTokens: 20 });
    expect(
      chats.filter((chat) => chat.attributes['gen_ai.usage.cache_read.input_tokens'] === 1500),
    ).toHaveLength(1);
    expect(mathSpan!.attributes).toMatchObject({
      'gen_ai.agent.name': 'math',
      'gen_ai.agent.id': math.id,
      'gen_ai.conversation.id': sessionId,
    });
    expect(calculate!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'calculate',
    });
    for (const chat of chats) {
      expect(chat.attributes['gen_ai.operation.name']).toBe('chat');
      expect(chat.attributes['gen_ai.request.model']).toBe('fixture');
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat.startNanos).toBeLessThanOrEqual(chat.endNanos);
    }
    // A child's span lies inside its parent's.
    expect(mathSpan!.startNanos).toBeGreaterThanOrEqual(delegation!.startNanos);
    expect(mathSpan!.endNanos).toBeLessThanOrEqual(delegation!.endNanos);
    expect(mainSpan!.resource['service.name']).toBe('cadre-test');
  });

  it('a failed tool call and a failed run are spans with an error status', async () => {
    const receiver = await startOtlpReceiver();
    closers.push(receiver.close);
    const bus = new EventBus();
    const tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, bus, '0.0.0')!;
    const base = {
      runId: 'run_a',
      rootRunId: 'run_a',
      parentRunId: null,
      depth: 0,
      agent: 'main',
      time: Date.now(),
    };
    bus.publish({ ...base, seq: 0, type: 'run-start', task: 't', model: 'openai:gpt-x', userId: 'local' });
    bus.publish({ ...base, seq: 1, type: 'tool-call', toolCallId: 'c1', name: 'web_fetch', input: {} });
    bus.publish({
      ...base,
      seq: 2,
      type: 'tool-result',
      toolCallId: 'c1',
      name: 'web_fetch',
      ok: false,
      error: 'refused',
      ms: 1,
    });
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    bus.publish({
      ...base,
      seq: 3,
      type: 'run-finish',
      status: 'error',
      summary: 'it broke',
      usage,
      subtreeUsage: usage,
    });
    await tracing.shutdown();
    const tool = receiver.spans.find((span) => span.name === 'execute_tool web_fetch');
    const run = receiver.spans.find((span) => span.name === 'invoke_agent main');
    expect(tool?.status.code).toBe(2);
    expect(tool?.attributes['error.type']).toBe('tool_error');
    expect(run?.status).toMatchObject({ code: 2, message: 'it broke' });
    expect(run?.attributes['error.type']).toBe('error');
  });

  it('without an endpoint nothing is loaded or subscribed', () => {
    const bus = new EventBus();
    let listeners = 0;
    const subscribe = bus.subscribe.bind(bus);
    bus.subscribe = (listener) => {
      listeners++;
      return subscribe(listener);
    };
    expect(startTracing({}, bus, '0.0.0')).toBeUndefined();
    expect(
      startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_SDK_DISABLED: 'true' }, bus, '0'),
    ).toBeUndefined();
    expect(listeners).toBe(0);
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!check()) throw new Error('the spans never arrived');
}
