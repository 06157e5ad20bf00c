import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { testServer } from '../../test/helpers/server.ts';
import { EventBus } from '../core/events.ts';
import { CadreMetrics } from './metrics.ts';

/** The value of metric `name` with exactly these labels (among its others), as Prometheus would read it. */
function value(
  families: ParsedFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.find((candidate) => candidate.name === name);
  const metric = family?.metrics.find((each) =>
    Object.entries(labels).every(([key, wanted]) => each.labels?.[key] === wanted),
  );
  return metric?.value === undefined ? undefined : Number(metric.value);
}

describe('metrics', () => {
  it('counts model calls, tokens by kind and runs by status, served as Prometheus text on /metrics', async () => {
    const { app, cadre } = await testServer(
      (request) =>
        request.system.includes('## When to delegate') && request.toolResults.length === 0
          ? {
              toolCalls: [{ name: 'math', input: { task: '6*7' } }],
              usage: { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 800, reasoningTokens: 20 },
            }
          : { text: '42', usage: { inputTokens: 300, outputTokens: 10, cacheWriteTokens: 100 } },
      { config: { metrics: true } },
    );
    const run = await cadre.ask({ userId: 'local', message: 'What is 6*7?' });
    await run.result;
    const response = await app.request('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(await response.text());
    const model = { model: 'scripted:test' };
    // main: two calls (delegate, answer); math: one.
    expect(value(families, 'cadre_model_calls_total', model)).toBe(3);
    expect(value(families, 'cadre_model_tokens_total', { ...model, kind: 'cache_read' })).toBe(800);
    expect(value(families, 'cadre_model_tokens_total', { ...model, kind: 'input' })).toBe(200 + 2 * 200);
    expect(value(families, 'cadre_model_tokens_total', { ...model, kind: 'cache_write' })).toBe(200);
    expect(value(families, 'cadre_model_tokens_total', { ...model, kind: 'reasoning' })).toBe(20);
    expect(value(families, 'cadre_model_tokens_total', { ...model, kind: 'output' })).toBe(30 + 20);
    expect(value(families, 'cadre_runs_finished_total', { status: 'ok' })).toBe(2);
    expect(families.find((family) => family.name === 'cadre_runs_finished_total')?.type).toBe('COUNTER');
    await cadre.close();
  });

  it('is a 404 unless the config turns it on', async () => {
    const { app, cadre } = await testServer(() => ({ text: 'hi' }));
    expect((await app.request('/metrics')).status).toBe(404);
    await cadre.close();
  });

  it('counts a resumed run’s replayed steps once', () => {
    const metrics = new CadreMetrics();
    const bus = new EventBus();
    metrics.watchRuns(bus);
    const base = { runId: 'r1', rootRunId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
    const start = { ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'u' } as const;
    const step = { ...base, seq: 1, type: 'step-finish', step: 0, finishReason: 'stop', usage } as const;
    bus.publish(start);
    bus.publish(step);
    // The attempt that goes on from the journal tells both again before its new step.
    bus.publish(start);
    bus.publish(step);
    bus.publish({ ...step, seq: 2, step: 1 });
    return metrics.text().then((text) => {
      const families = parsePrometheusTextFormat(text);
      expect(value(families, 'cadre_model_calls_total', { model: 'm:x' })).toBe(2);
      expect(value(families, 'cadre_model_tokens_total', { model: 'm:x', kind: 'input' })).toBe(20);
    });
  });
});
