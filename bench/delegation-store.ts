/**
 * Does storing stall the loop? One delegation (main 2 model calls, a sub-agent 6 calls and 5 tool calls)
 * run by Cadre storing what `cadre ask` stores (every event, and the run journal's model steps and tool
 * results) in a SQLite file, against AI SDK's own streaming loop doing the same (a ToolLoopAgent whose
 * tool streams another ToolLoopAgent), same scripted model, alternating one of each so load on the machine
 * hits both alike. Reports the per-delegation ratio at the median and at p90, the main thread's CPU time per
 * delegation at the median (what each side costs, which other load on the machine sways less than the
 * wall-clock ratio), the event loop's worst delay
 * (`perf_hooks.monitorEventLoopDelay`) while each ran, and the longest the store itself held the loop
 * (one slice of inserts, or securing a step in the spool). Run alone: `npx node bench/delegation-store.ts`
 * (BENCH_ITERATIONS, BENCH_OUTPUT_BYTES for large tool outputs, BENCH_JOURNAL=off for events only,
 * BENCH_STORE=off for the runtime alone, BENCH_DURABILITY=step or batched for one mode, BENCH_ANSWER_CHARS for answers of that many characters streamed in 24-character deltas, as a model's tokens; for profiling, BENCH_SIDE=cadre or sdk runs one side and
 * BENCH_DEBUG=1 prints the writer's statistics).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { LanguageModel } from 'ai';
import { z } from 'zod';
import { agentDefinitionSchema } from '../src/core/agent-definition.ts';
import { Runtime } from '../src/core/runtime.ts';
import { defineTool } from '../src/core/tool.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { sdkNestedMain } from './core.ts';

const STEPS = 6;
const usage = { inputTokens: 100, outputTokens: 10 };

/** The scripted model; answers of about `answerChars` characters stream as 24-character text deltas. */
function script(answerChars: number) {
  const answer = (who: string) => `${who} answer${' word'.repeat(Math.floor(answerChars / 5))}`;
  return (request: ScriptedRequest) => {
    if (request.system.includes('MAIN')) {
      return request.toolResults.length
        ? { text: answer('main'), usage }
        : { toolCalls: [{ name: 'worker', input: { task: 'work' } }], usage };
    }
    const done = request.prompt.filter((message) => message.role === 'tool').length;
    if (done < STEPS - 1) return { toolCalls: [{ name: 'echo', input: { text: `step ${done}` } }], usage };
    return { text: answer('worker'), usage };
  };
}

function cadreRuntime(
  model: LanguageModel,
  output: (text: string) => unknown,
  beforeModelRequest?: () => void | Promise<void>,
) {
  const echo = defineTool({
    name: 'echo',
    family: 'bench',
    description: 'echo',
    input: z.object({ text: z.string() }),
    execute: async ({ text }) => output(text),
  });
  const agents = new Map(
    [
      { name: 'main', description: 'main', instructions: 'MAIN', tools: ['worker'], maxTurns: 20 },
      { name: 'worker', description: 'worker', instructions: 'WORKER', tools: ['echo'], maxTurns: 20 },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  return new Runtime({
    agents,
    tools: new ToolRegistry([echo]),
    resolveModel: () => model,
    mainModel: 'scripted:bench',
    limits: { maxToolOutputChars: 1_000_000 },
    // As `cadre` wires it: what the runs published is secured before each model request.
    ...(beforeModelRequest ? { beforeModelRequest } : {}),
  });
}

/** A journal kept in a map: what the journal's bookkeeping costs without storing it. */
function memoryJournal() {
  const entries = new Map<string, unknown>();
  return {
    get: (runKey: string, kind: string, key: string) => entries.get(`${runKey} ${kind} ${key}`),
    put: (runKey: string, kind: string, key: string, body: unknown) => {
      entries.set(`${runKey} ${kind} ${key}`, JSON.parse(JSON.stringify(body ?? null)));
    },
  };
}

interface Sample {
  ms: number;
  /** CPU time of this thread while it ran, in milliseconds: what it cost, less swayed by other load than `ms`. */
  cpuMs: number;
  /** The event loop's worst delay while this one ran, in milliseconds. */
  worstDelayMs: number;
}

async function sample(run: () => Promise<unknown>): Promise<Sample> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const cpu = process.threadCpuUsage();
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  const used = process.threadCpuUsage(cpu);
  // Let the writer's last slice (and its delay) land inside this sample, not the next one's.
  await new Promise((resolve) => setTimeout(resolve, 25));
  histogram.disable();
  return { ms, cpuMs: (used.user + used.system) / 1000, worstDelayMs: histogram.max / 1e6 };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export interface DelegationStoreResult {
  outputBytes: number;
  answerChars: number;
  durability: 'step' | 'batched';
  iterations: number;
  cadre: { medianMs: number; p90Ms: number; cpuMedianMs: number; worstDelayMs: number; p99DelayMs: number };
  sdk: { medianMs: number; p90Ms: number; cpuMedianMs: number; worstDelayMs: number; p99DelayMs: number };
  ratio: { median: number; p90: number };
  storedEvents: number;
  journal: boolean;
  /** The longest the store held the event loop at once: a slice of inserts, or securing a step. */
  storeStallMs: { slice: number; secure: number };
}

export async function benchDelegationStore(
  iterations = 200,
  outputBytes = 0,
  durability: 'step' | 'batched' = 'step',
  answerChars = Number(process.env.BENCH_ANSWER_CHARS ?? 0),
): Promise<DelegationStoreResult> {
  const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'cadre-bench-store-')), 'cadre.db'), {
    events: { durability },
    ...(process.env.BENCH_CKPT_DELAY
      ? { checkpoints: { delayMs: Number(process.env.BENCH_CKPT_DELAY) } }
      : {}),
  });
  const filler = 'x'.repeat(outputBytes);
  const output = (text: string) => (outputBytes ? { text, page: filler } : { text });
  const model = new ScriptedModel(script(answerChars));
  const storing = process.env.BENCH_STORE !== 'off';
  const runtime = cadreRuntime(model, output, storing ? () => store.runs.secure() : undefined);
  let storedEvents = 0;
  runtime.bus.subscribe((event) => {
    storedEvents++;
    if (storing) store.runs.record(event);
  });
  const sdk = sdkNestedMain(model, output);
  const runSdk = async () => {
    const result = await sdk.stream({ prompt: 'delegate' } as Parameters<typeof sdk.stream>[0]);
    for await (const _part of result.stream) {
      // drain
    }
  };
  const journal = storing && process.env.BENCH_JOURNAL !== 'off';
  const runCadre = () => {
    if (!journal) return runtime.run({ agent: 'main', task: 'delegate' });
    if (process.env.BENCH_JOURNAL === 'memory')
      return runtime.run({ agent: 'main', task: 'delegate', record: { journal: memoryJournal() } });
    // As `cadre ask` does: a new journal, and the attempt recorded when the root run starts.
    const journalId = `jrn_${randomUUID()}`;
    return runtime.run({
      agent: 'main',
      task: 'delegate',
      record: { journal: store.journal.create(journalId) },
      onEvent: (event) => {
        if (event.type === 'run-start' && event.parentRunId === null)
          void store.journal.begin(journalId, event.runId, 'local', {
            agent: 'main',
            task: 'delegate',
            history: [],
            inputs: {},
          });
      },
    });
  };
  for (let i = 0; i < 20; i++) {
    await runSdk();
    await runCadre();
  }
  const cadre: Sample[] = [];
  const plain: Sample[] = [];
  for (let i = 0; i < iterations; i++) {
    if (process.env.BENCH_SIDE !== 'cadre') plain.push(await sample(runSdk));
    if (process.env.BENCH_SIDE !== 'sdk') cadre.push(await sample(runCadre));
    // The scripted model keeps every request for tests to read (its call options too, signals and all):
    // hundreds of delegations' worth would grow the heap, and each side's scavenges with it.
    model.calls.length = 0;
  }
  if (process.env.BENCH_DEBUG) console.log(store.runs.writerStats);
  await store.close();
  const summary = (samples: Sample[]) => ({
    medianMs: quantile(
      samples.map((s) => s.ms),
      0.5,
    ),
    p90Ms: quantile(
      samples.map((s) => s.ms),
      0.9,
    ),
    cpuMedianMs: quantile(
      samples.map((s) => s.cpuMs),
      0.5,
    ),
    worstDelayMs: Math.max(...samples.map((s) => s.worstDelayMs)),
    p99DelayMs: quantile(
      samples.map((s) => s.worstDelayMs),
      0.99,
    ),
  });
  const c = summary(cadre);
  const s = summary(plain);
  return {
    outputBytes,
    answerChars,
    durability,
    iterations,
    cadre: c,
    sdk: s,
    ratio: { median: c.medianMs / s.medianMs, p90: c.p90Ms / s.p90Ms },
    storedEvents,
    journal,
    storeStallMs: {
      slice: store.runs.writerStats.longestSliceMs,
      secure: store.runs.writerStats.longestSecureMs,
    },
  };
}

export function printDelegationStore(result: DelegationStoreResult): void {
  const f = (n: number) => n.toFixed(2);
  const size =
    (result.outputBytes ? `${Math.round(result.outputBytes / 1024)} KB tool outputs` : 'small outputs') +
    (result.answerChars ? `, answers of ${result.answerChars} characters in 24-character deltas` : '');
  console.log(
    `core: one delegation with every event${result.journal ? ' and journal entry' : ''} stored in SQLite (durability ${result.durability}) vs AI SDK's streaming loop (${size}, ${result.iterations} pairs, ${result.storedEvents} events)`,
  );
  console.log(
    `  median  cadre ${f(result.cadre.medianMs)} ms   ai-sdk ${f(result.sdk.medianMs)} ms   ratio ${result.ratio.median.toFixed(2)}x (target <= 1.25x)`,
  );
  console.log(
    `  p90     cadre ${f(result.cadre.p90Ms)} ms   ai-sdk ${f(result.sdk.p90Ms)} ms   ratio ${result.ratio.p90.toFixed(2)}x (target <= 1.25x)`,
  );
  console.log(
    `  main-thread CPU per delegation (median)  cadre ${f(result.cadre.cpuMedianMs)} ms   ai-sdk ${f(result.sdk.cpuMedianMs)} ms   ratio ${(result.cadre.cpuMedianMs / result.sdk.cpuMedianMs).toFixed(2)}x (what each costs; the guard reads wall-clock, which other load on the machine sways more)`,
  );
  console.log(
    `  event loop worst delay  cadre ${f(result.cadre.worstDelayMs)} ms (p99 of runs ${f(result.cadre.p99DelayMs)})   ai-sdk ${f(result.sdk.worstDelayMs)} ms (p99 ${f(result.sdk.p99DelayMs)})`,
  );
  console.log(
    `  longest stall by the store  ${f(Math.max(result.storeStallMs.slice, result.storeStallMs.secure))} ms (slice of inserts ${f(result.storeStallMs.slice)}, securing a step ${f(result.storeStallMs.secure)})   (target <= 5 ms)`,
  );
}

if (import.meta.main) {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
  const modes = (process.env.BENCH_DURABILITY ?? 'step,batched').split(',') as ('step' | 'batched')[];
  for (const durability of modes) {
    for (const bytes of (process.env.BENCH_OUTPUT_BYTES ?? '0,20480').split(',').map(Number)) {
      printDelegationStore(await benchDelegationStore(iterations, bytes, durability));
    }
  }
}
