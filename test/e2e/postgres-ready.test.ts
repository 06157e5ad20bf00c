/**
 * `GET /ready` as an operator's probe sees it, on PostgreSQL: a `cadre serve --no-worker` is not ready
 * while no worker runs (its questions would only wait) and is once one does; a worker started with
 * `--port` answers the same; a database migrated by a newer Cadre makes both say so. `/health` only says
 * the process is up, whatever the rest.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { startServe } from '../helpers/serve.ts';
import { storeReader } from '../helpers/store-reader.ts';

interface ReadyBody {
  ready: boolean;
  reasons: string[];
  checks: {
    database: { ok: boolean };
    migrations?: { ok: boolean; unknown: string[] };
    workers?: { live: number };
  };
}

/** The first value of metric `name` whose labels include these. */
function value(
  families: ParsedFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const metric = families
    .find((family) => family.name === name)
    ?.metrics.find((each) => Object.entries(labels).every(([key, wanted]) => each.labels?.[key] === wanted));
  return metric?.value === undefined
    ? metric?.count === undefined
      ? undefined
      : Number(metric.count)
    : Number(metric.value);
}

async function ready(url: string): Promise<{ status: number; body: ReadyBody }> {
  const response = await fetch(`${url}/ready`);
  return { status: response.status, body: (await response.json()) as ReadyBody };
}

describe.skipIf(!TEST_DATABASE_URL)('readiness on PostgreSQL', () => {
  it('a --no-worker server is ready only while a worker runs; a worker answers on its own port', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Hello.' }));
    const env = { ...fixtureModelEnv(model, tempHome()), CADRE_DATABASE_URL: await freshSchema('ready') };
    writeFileSync(join(env.CADRE_HOME, 'config.json'), JSON.stringify({ metrics: true }));
    const server = await startServe(['--port', '0', '--no-worker'], env);
    onTestFinished(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const waiting = await ready(server.url);
    expect(waiting.status).toBe(503);
    expect(waiting.body.ready).toBe(false);
    expect(waiting.body.checks.database.ok).toBe(true);
    expect(waiting.body.checks.migrations?.ok).toBe(true);
    expect(waiting.body.checks.workers?.live).toBe(0);
    expect(waiting.body.reasons.join('\n')).toMatch(/no worker is running/);

    const worker = await startWorker(env, 'probe', ['--concurrency', '1', '--port', '0']);
    await worker.waitFor(/answers \/health and \/ready on http:\/\/\S+/);
    const workerUrl = /on (http:\/\/\S+)/.exec(worker.output())![1]!;
    const serving = await ready(server.url);
    expect(serving.status).toBe(200);
    expect(serving.body).toMatchObject({ ready: true, reasons: [], checks: { workers: { live: 1 } } });
    const own = await ready(workerUrl);
    expect(own.status).toBe(200);
    expect(own.body.checks.workers).toBeUndefined();
    expect((await fetch(`${workerUrl}/health`)).status).toBe(200);
    expect((await fetch(`${workerUrl}/v1/models`)).status).toBe(404);

    // A question through the queue, then the worker's metrics as Prometheus reads them.
    const asked = await runCli(['ask', '--no-worker', '--json', 'Hi'], env);
    expect(JSON.parse(asked.stdout).answer).toBe('Hello.');
    const scraped = await fetch(`${workerUrl}/metrics`);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scraped.text();
    const families = parsePrometheusTextFormat(text);
    expect(value(families, 'cadre_jobs_taken_total', { kind: 'tree' })).toBe(1);
    expect(value(families, 'cadre_jobs_finished_total', { kind: 'tree', outcome: 'completed' })).toBe(1);
    // (The parser keeps a histogram's buckets but not its labelled count: read from the text.)
    expect(text).toMatch(/^cadre_job_pickup_seconds_count\{kind="tree"\} 1$/m);
    expect(families.find((family) => family.name === 'cadre_job_pickup_seconds')?.type).toBe('HISTOGRAM');
    expect(value(families, 'cadre_worker_slots', { state: 'free' })).toBe(1);
    expect(value(families, 'cadre_model_calls_total', { model: 'compatible:fixture' })).toBe(1);
    expect(value(families, 'cadre_runs_finished_total', { status: 'ok' })).toBe(1);
    expect(value(families, 'cadre_queue_oldest_waiting_seconds', { kind: 'tree' })).toBe(0);
    expect(families.map((family) => family.name)).toContain('cadre_queue_set_aside_jobs');
    // The front door sees the same queue (and ran no model itself).
    const front = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
    expect(front.map((family) => family.name)).toContain('cadre_queue_jobs');
    expect(value(front, 'cadre_model_calls_total')).toBeUndefined();

    // A newer Cadre migrated the database meanwhile: this one may not understand it, and says so.
    const store = storeReader(env);
    await store.execute("INSERT INTO migrations (id, applied_at) VALUES ('999_from_a_newer_cadre', 0)");
    await store.close();
    for (const url of [server.url, workerUrl]) {
      const newer = await ready(url);
      expect(newer.status).toBe(503);
      expect(newer.body.checks.migrations?.unknown).toEqual(['999_from_a_newer_cadre']);
      expect(newer.body.reasons.join('\n')).toMatch(/migrated by a newer Cadre/);
    }
    await worker.kill();
    // The lease is the killed process's database session: PostgreSQL ends it (and its lock) once it sees
    // the socket closed, a moment after the process has gone (CI once read it still held).
    const deadline = Date.now() + 10_000;
    let live = (await ready(server.url)).body.checks.workers?.live;
    while (live !== 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      live = (await ready(server.url)).body.checks.workers?.live;
    }
    expect(live).toBe(0);
  }, 90_000);
});
