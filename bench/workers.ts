/**
 * Runs as jobs (issue 25): trees per second with 1, 2 and 4 `cadre worker` processes against the embedded
 * mode in the same run, the queue's pick-up latency (enqueue → the root's run-start), the time from a
 * SIGKILL of a worker to its tree running again elsewhere, and a kill test's tally. Each tree is a main
 * agent and four sub-agents with scripted 200 ms model steps, so the work is model-bound, as real trees are.
 *
 * Needs PostgreSQL: BENCH_DATABASE_URL (or CADRE_TEST_DATABASE_URL), else a throwaway cluster is started
 * with .ci/start-postgres (root and Debian's PostgreSQL). `npm run bench:workers`; also in `npm run bench`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Cadre } from '../src/app/create-cadre.ts';
import { type RecordedRequest, startOpenAIServer } from '../test/fixtures/openai-server.ts';

const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname;
const CI = new URL('../.ci/', import.meta.url).pathname;
const STEP_MS = 200;
const TREES = Number(process.env.BENCH_TREES ?? 16);
const SLOTS_PER_WORKER = 2;

const isMain = (system: string) => system.includes('You are Cadre, an assistant');
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");
const lastIsUser = (request: RecordedRequest) => request.body.messages.at(-1)?.role === 'user';

/** A database for the bench: the given one, or a throwaway cluster stopped at the end. */
function database(): { url: string; stop: () => void } {
  const given = process.env.BENCH_DATABASE_URL ?? process.env.CADRE_TEST_DATABASE_URL;
  if (given) return { url: given, stop: () => {} };
  const folder = mkdtempSync('/tmp/cadre-bench-pg-');
  const url = execFileSync('bash', [join(CI, 'start-postgres'), folder], { encoding: 'utf8' }).trim();
  return { url, stop: () => execFileSync('bash', [join(CI, 'stop-postgres'), folder]) };
}

async function freshSchema(url: string, name: string): Promise<string> {
  const schema = `bench_${name}_${process.pid}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const withPath = new URL(url);
  withPath.searchParams.set('options', `-c search_path=${schema}`);
  return withPath.toString();
}

interface WorkerProcess extends ChildProcess {
  output: () => string;
}

function startWorkerProcess(env: Record<string, string>, name: string): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    [CLI, 'worker', '--name', name, '--concurrency', String(SLOTS_PER_WORKER)],
    {
      env: { PATH: process.env.PATH ?? '', TMPDIR: tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const worker = Object.assign(child, { output: () => output });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('ready')) resolve(worker);
    });
    child.stderr!.on('data', (chunk) => {
      output += chunk;
    });
    child.on('exit', () => reject(new Error(`worker ${name} exited:\n${output}`)));
  });
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
          worker.on('exit', () => resolve());
          worker.kill('SIGKILL');
        }),
    ),
  );
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** A Cadre that only asks (runs as jobs, no worker here) or runs everything itself (embedded). */
async function asker(env: Record<string, string>, embedded: boolean): Promise<Cadre> {
  return Cadre.create({ env, cwd: process.cwd(), lazy: false, ...(embedded ? {} : { worker: false }) });
}

/** Asks TREES questions at once; resolves to the wall time and how many ended ok. */
async function throughput(cadre: Cadre): Promise<{ ms: number; ok: number }> {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: TREES }, async (_, n) => {
      const run = await cadre.ask({ userId: 'local', message: `Compute the four parts of case ${n}.` });
      return (await run.result).status;
    }),
  );
  return { ms: performance.now() - started, ok: results.filter((status) => status === 'ok').length };
}

export async function runWorkersBench(): Promise<void> {
  const given = process.env.BENCH_DATABASE_URL ?? process.env.CADRE_TEST_DATABASE_URL;
  if (!given && process.getuid?.() !== 0) {
    console.log(
      'runs as jobs: skipped (set BENCH_DATABASE_URL to a PostgreSQL database, or run as root to start a throwaway one)',
    );
    return;
  }
  const db = database();
  const model = await startOpenAIServer((request) => {
    if (isMain(request.system) && lastIsUser(request))
      return {
        delayMs: STEP_MS,
        toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'math', arguments: { task: `Compute part ${n}.` } })),
      };
    if (isMain(request.system)) return { delayMs: STEP_MS, text: 'All four parts are done.' };
    if (isMath(request.system)) return { delayMs: STEP_MS, text: 'Part computed.' };
    return { text: 'unexpected' };
  });
  const base = (home: string) => ({
    CADRE_HOME: home,
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: model.baseURL,
  });
  const home = () => {
    const folder = mkdtempSync(join(tmpdir(), 'cadre-bench-workers-'));
    // Every bench user may have all its trees running at once.
    writeFileSync(join(folder, 'config.json'), JSON.stringify({}));
    return folder;
  };
  console.log(
    `runs as jobs: ${TREES} trees at once, each main + 4 sub-agents, ${STEP_MS} ms model steps, ${SLOTS_PER_WORKER} slots per worker`,
  );
  try {
    const embeddedCadre = await asker(base(home()), true);
    const embedded = await throughput(embeddedCadre);
    await embeddedCadre.close();
    const embeddedRate = (embedded.ok / embedded.ms) * 1000;
    console.log(
      `  embedded (one process, SQLite)   ${embeddedRate.toFixed(2)} trees/s   (${embedded.ok}/${TREES} ok in ${Math.round(embedded.ms)} ms)`,
    );
    const rates = new Map<number, number>();
    for (const count of [1, 2, 4]) {
      const env = { ...base(home()), CADRE_DATABASE_URL: await freshSchema(db.url, `w${count}`) };
      const workers = await Promise.all(
        Array.from({ length: count }, (_, n) => startWorkerProcess(env, `w${n + 1}`)),
      );
      const cadre = await asker(env, false);
      try {
        const result = await throughput(cadre);
        const rate = (result.ok / result.ms) * 1000;
        rates.set(count, rate);
        console.log(
          `  ${count} worker${count > 1 ? 's' : ' '} (PostgreSQL, pg-boss)  ${rate.toFixed(2)} trees/s   (${result.ok}/${TREES} ok in ${Math.round(result.ms)} ms)   ${(rate / embeddedRate).toFixed(2)}x embedded${count > 1 ? `   ${(rate / rates.get(1)!).toFixed(2)}x one worker` : ''}`,
        );
      } finally {
        await cadre.close();
        await stopWorkers(workers);
      }
    }
    await pickUp(db.url, base(home()));
    await killTakeover(db.url, base(home()), model);
  } finally {
    await model.close();
    db.stop();
  }
}

/** Enqueue → the root's run-start, one tree at a time, an idle worker waiting. */
async function pickUp(url: string, base: Record<string, string>): Promise<void> {
  const env = { ...base, CADRE_DATABASE_URL: await freshSchema(url, 'pickup') };
  const worker = await startWorkerProcess(env, 'w1');
  const cadre = await asker(env, false);
  const latencies: number[] = [];
  let queued: number[] = [];
  try {
    for (let n = 0; n < 30; n++) {
      let startedAt = 0;
      const asked = performance.timeOrigin + performance.now();
      const run = await cadre.ask({
        userId: 'local',
        message: `Pick-up probe ${n}.`,
        agent: 'math',
        onEvent: (event) => {
          if (event.type === 'run-start' && !startedAt) startedAt = event.time;
        },
      });
      await run.result;
      latencies.push(startedAt - asked);
    }
    // The queue's own clock: a job created → taken by the worker (pg-boss's created_on and started_on).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ ms: number }>(
      `SELECT extract(epoch FROM started_on - created_on) * 1000 AS ms FROM bench_pickup_${process.pid}_jobs.job WHERE name = 'cadre-tree'`,
    );
    await client.end();
    queued = rows.map((row) => Number(row.ms));
  } finally {
    await cadre.close();
    await stopWorkers([worker]);
  }
  console.log(
    `  pick-up, enqueue → taken by an idle worker (30 trees, one at a time): p50 ${Math.round(percentile(queued, 50))} ms, p95 ${Math.round(percentile(queued, 95))} ms (goal p50 <= 50 ms)`,
  );
  console.log(
    `    asked → the root's run-start (storing the question, the queue, the worker's start of the run): p50 ${Math.round(percentile(latencies, 50))} ms, p95 ${Math.round(percentile(latencies, 95))} ms`,
  );
}

/**
 * Eight trees on two workers; the one holding more sub-agents is killed while they are held mid-way. How
 * long until its work runs again on the other, and what was lost or asked twice.
 */
async function killTakeover(
  url: string,
  base: Record<string, string>,
  model: Awaited<ReturnType<typeof startOpenAIServer>>,
): Promise<void> {
  const env = { ...base, CADRE_DATABASE_URL: await freshSchema(url, 'kill') };
  const workers = [await startWorkerProcess(env, 'k1'), await startWorkerProcess(env, 'k2')];
  const cadre = await asker(env, false);
  const before = model.requests.length;
  const trees = 8;
  try {
    const runs = await Promise.all(
      Array.from({ length: trees }, (_, n) =>
        cadre.ask({ userId: 'local', message: `Compute the four parts of kill case ${n}.` }),
      ),
    );
    // Mid-way: once some sub-agents have asked their model.
    while (model.requests.slice(before).filter((request) => isMath(request.system)).length < 4)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const victim = workers[0]!;
    const killedAt = Date.now();
    victim.kill('SIGKILL');
    const statuses = await Promise.all(runs.map(async (run) => (await run.result).status));
    // The survivor logs each job it takes, a retried one with its try: the victim's work running again.
    const retried = /^(\S+) took \w+ job \S+ \(try \d+\)$/m.exec(workers[1]!.output());
    const resumedAt = retried ? Date.parse(retried[1]!) : Number.NaN;
    const requests = model.requests.slice(before);
    // Each tree asks main twice and math four times when nothing is repeated.
    const repeated = requests.length - trees * 6;
    const finished = statuses.filter((status) => status === 'ok').length;
    console.log(
      `  kill test: ${trees} trees started, 1 of 2 workers SIGKILLed mid-way, ${finished} finished ok, ${trees - finished} lost, ${repeated} model steps asked again (the ones in flight)`,
    );
    console.log(
      `  takeover: SIGKILL → the next model request from the queue's retried work: ${Math.round((resumedAt - killedAt) / 100) / 10} s (goal <= 30 s)`,
    );
  } finally {
    await cadre.close();
    await stopWorkers(workers);
  }
}

if (import.meta.main) await runWorkersBench();
