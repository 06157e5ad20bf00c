/**
 * Server load benchmark (`npm run bench:server`): STREAMS concurrent chat streams (default 200), each a
 * delegation tree whose model steps are scripted 50 ms waits, through `cadre serve`'s HTTP stack in a
 * separate process, against the same trees run at once in-process through the same use case without
 * HTTP. Checks every stream against the store (no event lost: each run's text, tool calls and final
 * status on the wire equal the stored events, and the stored message equals the one the client built),
 * and reports added latency (p50/p95), errors, bytes per stream and the server's peak RSS.
 * Targets: zero errors, zero lost events, p95 added latency <= 50 ms, server RSS <= 500 MB.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readUIMessageStream, type UIMessageChunk, uiMessageChunkSchema } from 'ai';
import type { CadreUIMessage, RunPartData } from '../src/app/answer/protocol.ts';
import { SERVE_NODE_FLAGS } from '../src/cli/node-flags.ts';
import type { CadreEvent } from '../src/core/events.ts';

const WORKER = fileURLToPath(new URL('./server-load-worker.ts', import.meta.url));
const STREAMS = Number(process.env.BENCH_STREAMS ?? 200);

interface StreamResult {
  ms: number;
  /** Wall-clock start and end (ms since the epoch), to compare with the tree's own event times. */
  startedAt: number;
  endedAt: number;
  bytes: number;
  chunks: UIMessageChunk[];
  /** Per event on the wire: when the client read it minus when the server's run emitted it, in ms. */
  lags: number[];
  sessionId: string;
  error?: string;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The served side runs with the Node flags `cadre serve` gives itself (see node-flags.ts). */
function startWorker(args: string[]): ChildProcess {
  const flags = args[0] === 'serve' ? SERVE_NODE_FLAGS : [];
  return spawn(process.execPath, [...flags, WORKER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
}

async function inProcess(streams: number): Promise<{ latencies: number[]; cpuMs: number }> {
  const child = startWorker(['inprocess', String(streams)]);
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  await new Promise((resolve) => child.on('close', resolve));
  const { results, cpuMs } = JSON.parse(output) as { results: Array<{ ms: number }>; cpuMs: number };
  return { latencies: results.map((result) => result.ms), cpuMs };
}

/** CPU time a process has used so far, in ms (Linux, clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startServerProcess(): Promise<{ child: ChildProcess; url: string }> {
  const child = startWorker(['serve']);
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /Cadre listening on (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.on('close', () => reject(new Error(`server exited: ${output}`)));
  });
  return { child, url };
}

/** Peak resident set size of a process, in MB (Linux). */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function oneStream(url: string, sessionId: string): Promise<StreamResult> {
  const started = performance.now();
  const startedAt = Date.now();
  const body = JSON.stringify({
    id: sessionId,
    messages: [
      {
        id: `u-${sessionId}`,
        role: 'user',
        parts: [{ type: 'text', text: `What is 17 times 23? (${sessionId})` }],
      },
    ],
  });
  try {
    const response = await fetch(`${url}/api/chat`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    // Read as a lean client does (split the SSE frames, JSON.parse each): the time measured is the
    // server's and the wire's, not a schema validator's. The chunks are checked after, with AI SDK's reader.
    let bytes = 0;
    let buffered = '';
    const chunks: UIMessageChunk[] = [];
    const lags: number[] = [];
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      buffered += decoder.decode(value, { stream: true });
      let end = buffered.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        end = buffered.indexOf('\n\n');
        const data = frame.startsWith('data: ') ? frame.slice(6) : undefined;
        if (!data || data === '[DONE]') continue;
        const chunk = JSON.parse(data) as UIMessageChunk;
        chunks.push(chunk);
        if (chunk.type === 'data-run-event') lags.push(Date.now() - (chunk.data as CadreEvent).time);
      }
    }
    for (const chunk of chunks) {
      const checked = await uiMessageChunkSchema().validate?.(chunk);
      if (checked && !checked.success) throw checked.error;
    }
    const ms = performance.now() - started;
    return { ms, startedAt, endedAt: startedAt + ms, bytes, chunks, lags, sessionId };
  } catch (error) {
    const ms = performance.now() - started;
    return {
      ms,
      startedAt,
      endedAt: startedAt + ms,
      bytes: 0,
      chunks: [],
      lags: [],
      sessionId,
      error: (error as Error).message,
    };
  }
}

interface RunFold {
  text: string;
  toolCalls: string[];
  status?: string;
}

/** Each run's text, tool call ids and final status as the client saw them. */
function foldWire(chunks: UIMessageChunk[]): Map<string, RunFold> {
  const runs = new Map<string, RunFold>();
  let root: string | undefined;
  const fold = (id: string) => {
    let run = runs.get(id);
    if (!run) {
      run = { text: '', toolCalls: [] };
      runs.set(id, run);
    }
    return run;
  };
  for (const chunk of chunks) {
    if (chunk.type === 'data-run') {
      const data = chunk.data as RunPartData;
      if (data.parentRunId === null) root = data.runId;
      fold(data.runId).status = data.status;
    } else if (chunk.type === 'data-run-event') {
      const event = chunk.data as CadreEvent;
      if (event.type === 'text-delta') fold(event.runId).text += event.delta;
      if (event.type === 'tool-call') fold(event.runId).toolCalls.push(event.toolCallId);
    } else if (chunk.type === 'text-delta' && root) fold(root).text += chunk.delta;
    else if (chunk.type === 'tool-input-available' && root) fold(root).toolCalls.push(chunk.toolCallId);
  }
  return runs;
}

function foldStored(events: CadreEvent[]): Map<string, RunFold> {
  const runs = new Map<string, RunFold>();
  for (const event of events) {
    let run = runs.get(event.runId);
    if (!run) {
      run = { text: '', toolCalls: [] };
      runs.set(event.runId, run);
    }
    if (event.type === 'text-delta') run.text += event.delta;
    if (event.type === 'tool-call') run.toolCalls.push(event.toolCallId);
    if (event.type === 'run-finish') run.status = event.status;
  }
  return runs;
}

async function liveMessage(chunks: UIMessageChunk[]): Promise<CadreUIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: CadreUIMessage | undefined;
  for await (const message of readUIMessageStream<CadreUIMessage>({ stream: stream as never }))
    last = message;
  return last;
}

/** Parts without the fields only the stored copy (folded history) or only the wire (summaryChars) has. */
function comparable(parts: CadreUIMessage['parts']): string {
  return JSON.stringify(
    JSON.parse(JSON.stringify(parts)).map((part: { type: string; data?: Record<string, unknown> }) => {
      if (part.type !== 'data-run' || !part.data) return part;
      const { text: _t, toolCalls: _c, plan: _p, summary: _s, summaryChars: _n, ...header } = part.data;
      return { ...part, data: header };
    }),
  );
}

/**
 * Problems found comparing one stream with what the server stored (empty when they match), and the tree's
 * own duration from its stored run-start and run-finish times.
 */
async function verify(url: string, result: StreamResult): Promise<{ problems: string[]; treeMs: number }> {
  const problems: string[] = [];
  const wire = foldWire(result.chunks);
  const rootPart = result.chunks.find(
    (chunk) => chunk.type === 'data-run' && (chunk.data as RunPartData).parentRunId === null,
  ) as { data: RunPartData } | undefined;
  if (!rootPart) return { problems: ['no root data-run part'], treeMs: Number.NaN };
  const eventsText = await (await fetch(`${url}/api/runs/${rootPart.data.runId}/events`)).text();
  const stored = eventsText
    .split('\n\n')
    .map((block) => /^data: ?(.*)$/m.exec(block)?.[1])
    .filter((data): data is string => Boolean(data))
    .map((data) => JSON.parse(data) as CadreEvent);
  for (const [runId, run] of foldStored(stored)) {
    const seen = wire.get(runId);
    if (!seen) problems.push(`run ${runId} never appeared on the wire`);
    else {
      if (seen.text !== run.text)
        problems.push(`run ${runId}: text differs (${seen.text.length} vs ${run.text.length} chars)`);
      if (seen.toolCalls.join() !== run.toolCalls.join()) problems.push(`run ${runId}: tool calls differ`);
      if (seen.status !== run.status) problems.push(`run ${runId}: status ${seen.status} vs ${run.status}`);
    }
  }
  const session = (await (await fetch(`${url}/api/sessions/${result.sessionId}`)).json()) as {
    messages: CadreUIMessage[];
  };
  const storedMessage = session.messages.find((message) => message.role === 'assistant');
  const live = await liveMessage(result.chunks);
  if (!storedMessage || !live || comparable(storedMessage.parts) !== comparable(live.parts))
    problems.push('the stored message differs from the one the client built');
  const rootId = rootPart.data.runId;
  const start = stored.find((event) => event.runId === rootId && event.type === 'run-start');
  const finish = stored.find((event) => event.runId === rootId && event.type === 'run-finish');
  return { problems, treeMs: start && finish ? finish.time - start.time : Number.NaN };
}

interface HttpRound {
  latencies: number[];
  /** Per stream: its events' delivery lag at p95 (read by the client minus emitted by the run). */
  lags: number[];
  /** Every event's delivery lag. */
  allLags: number[];
  errors: string[];
  problems: string[];
  bytes: number;
  cpuMs: number;
}

async function httpRound(url: string, pid: number, streams: number, round: number): Promise<HttpRound> {
  await Promise.all(Array.from({ length: 5 }, (_, index) => oneStream(url, `warm-${round}-${index}`)));
  const cpuBefore = cpuMsOf(pid);
  const results = await Promise.all(
    Array.from({ length: streams }, (_, index) => oneStream(url, `load-${round}-${index}`)),
  );
  const cpuMs = cpuMsOf(pid) - cpuBefore;
  const errors = results.flatMap((result) => (result.error ? [result.error] : []));
  const problems: string[] = [];
  for (const result of results.filter((candidate) => !candidate.error)) {
    const checked = await verify(url, result);
    for (const problem of checked.problems) problems.push(`${result.sessionId}: ${problem}`);
  }
  const ok = results.filter((result) => !result.error);
  return {
    latencies: results.filter((result) => !result.error).map((result) => result.ms),
    lags: ok.map((result) => percentile(result.lags, 95)),
    allLags: ok.flatMap((result) => result.lags),
    errors,
    problems,
    bytes: results.reduce((total, result) => total + result.bytes, 0) / Math.max(1, results.length),
    cpuMs,
  };
}

const median = (values: number[]) => percentile(values, 50);
const ms = (value: number) => `${value.toFixed(0).padStart(5)} ms`;

export async function runServerLoadBench(
  streams = STREAMS,
  rounds = Number(process.env.BENCH_ROUNDS ?? 2),
): Promise<void> {
  console.log(
    `Server load: ${streams} concurrent chat streams, each main -> math delegation with 4 scripted model steps of 50 ms; ` +
      `${rounds} rounds, in-process and over HTTP alternating (each figure is the median over rounds)`,
  );
  const { child, url } = await startServerProcess();
  const inproc: Array<{ latencies: number[]; cpuMs: number }> = [];
  const http: HttpRound[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      inproc.push(await inProcess(streams));
      http.push(await httpRound(url, child.pid!, streams, round));
    }
    const rss = peakRssMb(child.pid!);
    // Each figure: the percentile within each round, then the median over rounds.
    const at = (runs: number[][], p: number) => median(runs.map((values) => percentile(values, p)));
    const inLatencies = inproc.map((run) => run.latencies);
    const httpLatencies = http.map((run) => run.latencies);
    const allLags = http.map((run) => run.allLags);
    const [inP50, inP95] = [at(inLatencies, 50), at(inLatencies, 95)];
    const [httpP50, httpP95] = [at(httpLatencies, 50), at(httpLatencies, 95)];
    const [lagP50, lagP95] = [at(allLags, 50), at(allLags, 95)];
    const streamLagP95 = at(
      http.map((run) => run.lags),
      95,
    );
    const errors = http.flatMap((run) => run.errors);
    const problems = http.flatMap((run) => run.problems);
    const cpuIn = median(inproc.map((run) => run.cpuMs / streams));
    const cpuServer = median(http.map((run) => run.cpuMs / streams));
    console.log(`  in-process   p50 ${ms(inP50)}   p95 ${ms(inP95)}`);
    console.log(`  over HTTP    p50 ${ms(httpP50)}   p95 ${ms(httpP95)}`);
    console.log(
      `  ratio HTTP / in-process          p50 ${(httpP50 / inP50).toFixed(2)}x   p95 ${(httpP95 / inP95).toFixed(2)}x   (difference p95 ${(httpP95 - inP95).toFixed(0)} ms)`,
    );
    console.log(
      `  added latency (an event read by the client - emitted by its run)   p50 ${lagP50.toFixed(0)} ms   p95 ${lagP95.toFixed(0)} ms   ` +
        `worst stream's p95 (p95 over streams) ${streamLagP95.toFixed(0)} ms   (target p95 <= 50 ms)`,
    );
    console.log(
      `  CPU per stream   in-process ${cpuIn.toFixed(1)} ms   server ${cpuServer.toFixed(1)} ms   ratio ${(cpuServer / cpuIn).toFixed(2)}x`,
    );
    console.log(
      `  errors ${errors.length} / ${streams * rounds}   streams with lost or mismatched events: ${problems.length}   (targets 0, 0)`,
    );
    console.log(
      `  server peak RSS ${rss.toFixed(0)} MB (target <= 500 MB)   wire ${Math.round(median(http.map((run) => run.bytes)))} bytes per stream`,
    );
    for (const error of errors.slice(0, 5)) console.log(`  error: ${error}`);
    for (const problem of problems.slice(0, 5)) console.log(`  mismatch: ${problem}`);
    const pass = errors.length === 0 && problems.length === 0 && lagP95 <= 50 && rss <= 500;
    console.log(`  ${pass ? 'PASS' : 'FAIL'}`);
    if (!pass) process.exitCode = 1;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('close', resolve));
  }
}

if (import.meta.main) await runServerLoadBench();
