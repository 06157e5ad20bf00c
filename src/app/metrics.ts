import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CadreEvent, EventBus } from '../core/events.ts';
import type { Job, JobQueue, QueueStats } from '../store/job-queue.ts';
import type { JobOutcome, TreeWorker } from './jobs/tree-worker.ts';

/** The Content-Type of `/metrics`: Prometheus's text exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Cadre's metrics for Prometheus (`/metrics` on `cadre serve` and on `cadre worker --port`, when the config
 * says `"metrics": true`), kept by prom-client in a registry of this process's own:
 *
 * - model calls and tokens by model, tokens by kind (input not cached, cache read, cache write, output,
 *   reasoning), and runs finished by status, from the events of the runs this process executes;
 * - on a worker: slots used and free, jobs taken and finished by kind and outcome, takeovers (a job taken
 *   again after the worker holding it was gone) and pick-up latency (from takeable to taken);
 * - where runs are jobs: the queue's depth by kind and state, parents set aside and the oldest wait, read
 *   from the database when scraped.
 *
 * Names follow Prometheus's conventions (`cadre_` prefix, `_total` counters, base units).
 */
export class CadreMetrics {
  readonly registry = new Registry();
  readonly #modelCalls = new Counter({
    name: 'cadre_model_calls_total',
    help: 'Model calls (steps) finished, by model.',
    labelNames: ['model'],
    registers: [this.registry],
  });
  readonly #tokens = new Counter({
    name: 'cadre_model_tokens_total',
    help: 'Tokens the providers reported, by model and kind (input, cache_read, cache_write, output, reasoning).',
    labelNames: ['model', 'kind'],
    registers: [this.registry],
  });
  readonly #runs = new Counter({
    name: 'cadre_runs_finished_total',
    help: 'Runs (a root or a sub-agent) finished here, by status.',
    labelNames: ['status'],
    registers: [this.registry],
  });
  /** Each running run's model and the last event number counted (a resumed run replays its events). */
  readonly #running = new Map<string, { model: string; seq: number }>();
  #detach: (() => void) | undefined;

  /** Counts the model calls, tokens and runs of every run whose events go over `bus`. */
  watchRuns(bus: EventBus): void {
    this.#detach?.();
    this.#detach = bus.subscribe((event) => this.#event(event));
  }

  /** Counts what `worker` takes and how each job ends, and reports its slots when scraped. */
  watchWorker(worker: TreeWorker): void {
    const taken = new Counter({
      name: 'cadre_jobs_taken_total',
      help: 'Jobs this worker took, by kind (tree or run).',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    const finished = new Counter({
      name: 'cadre_jobs_finished_total',
      help: 'Attempts this worker was done with, by kind and outcome (completed, failed, set_aside, handed_back, taken, left).',
      labelNames: ['kind', 'outcome'],
      registers: [this.registry],
    });
    const takeovers = new Counter({
      name: 'cadre_job_takeovers_total',
      help: 'Jobs this worker took again after the worker that held them was gone or failed them.',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    const pickUp = new Histogram({
      name: 'cadre_job_pickup_seconds',
      help: 'From a job being takeable to this worker taking it.',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    new Gauge({
      name: 'cadre_worker_slots',
      help: "This worker's slots, by state (used, free).",
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'used' }, worker.slotsUsed);
        this.set({ state: 'free' }, worker.concurrency - worker.slotsUsed);
      },
    });
    const onJob = worker.onJob;
    worker.onJob = (job: Job) => {
      taken.inc({ kind: job.kind });
      if (job.retryCount > 0 && !job.resumed) takeovers.inc({ kind: job.kind });
      if (job.waitingSince !== undefined && !job.resumed)
        pickUp.observe({ kind: job.kind }, Math.max(0, (Date.now() - job.waitingSince) / 1000));
      onJob?.(job);
    };
    const onEnd = worker.onEnd;
    worker.onEnd = (job: Job, outcome: JobOutcome) => {
      finished.inc({ kind: job.kind, outcome });
      onEnd?.(job, outcome);
    };
  }

  /** Reports the queue's depth and oldest wait, read from the database once per scrape. */
  watchQueue(queue: () => Promise<JobQueue>): void {
    // The three gauges are collected side by side: they share one read (kept for a second).
    let reading: { at: number; stats: Promise<QueueStats> } | undefined;
    const read = () => {
      if (!reading || Date.now() - reading.at > 1_000)
        reading = { at: Date.now(), stats: queue().then((jobs) => jobs.stats()) };
      return reading.stats;
    };
    new Gauge({
      name: 'cadre_queue_jobs',
      help: 'Jobs in the queue not yet settled, by kind (tree, run, dead) and state.',
      labelNames: ['kind', 'state'],
      registers: [this.registry],
      async collect() {
        const stats = await read();
        this.reset();
        for (const row of stats.jobs) this.set({ kind: row.kind, state: row.state }, row.count);
      },
    });
    new Gauge({
      name: 'cadre_queue_set_aside_jobs',
      help: 'Parent jobs set aside while the sub-agent runs they wait on go on.',
      registers: [this.registry],
      async collect() {
        this.set((await read()).setAside);
      },
    });
    new Gauge({
      name: 'cadre_queue_oldest_waiting_seconds',
      help: 'How long the longest-waiting takeable job of each kind has waited.',
      labelNames: ['kind'],
      registers: [this.registry],
      async collect() {
        for (const [kind, seconds] of Object.entries((await read()).oldestWaitingSeconds))
          this.set({ kind }, seconds);
      },
    });
  }

  /** The metrics in Prometheus's text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  close(): void {
    this.#detach?.();
    this.#detach = undefined;
  }

  #event(event: CadreEvent): void {
    if (event.type === 'run-start') {
      // A resumed run starts again from its first event: what it had counted stays counted.
      if (!this.#running.has(event.runId))
        this.#running.set(event.runId, { model: event.model, seq: event.seq });
      return;
    }
    const run = this.#running.get(event.runId);
    // A resumed run tells its committed events again: each is counted once.
    if (!run || event.seq <= run.seq) return;
    run.seq = event.seq;
    if (event.type === 'step-finish') {
      const { model } = run;
      const usage = event.usage;
      const cacheRead = usage.cacheReadTokens ?? 0;
      const cacheWrite = usage.cacheWriteTokens ?? 0;
      const reasoning = usage.reasoningTokens ?? 0;
      this.#modelCalls.inc({ model });
      for (const [kind, tokens] of [
        ['input', Math.max(0, usage.inputTokens - cacheRead - cacheWrite)],
        ['cache_read', cacheRead],
        ['cache_write', cacheWrite],
        ['output', Math.max(0, usage.outputTokens - reasoning)],
        ['reasoning', reasoning],
      ] as const)
        if (tokens > 0) this.#tokens.inc({ model, kind }, tokens);
    } else if (event.type === 'run-finish') {
      this.#runs.inc({ status: event.status });
      this.#running.delete(event.runId);
    }
  }
}
