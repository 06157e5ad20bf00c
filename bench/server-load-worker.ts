/**
 * The process the server load benchmark measures, in one of two modes:
 * - `serve`: `cadre serve`'s server on a free port with the scripted model; prints its URL, runs until SIGTERM;
 * - `inprocess N`: the same trees through the same ask use case, N at once, no HTTP; prints latencies.
 * Every model step of the tree is a scripted 50 ms wait: main delegates to math, math calls vault_set and
 * answers, main answers.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cadre } from '../src/app/create-cadre.ts';
import { ScriptedModel, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { startServer } from '../src/server/serve.ts';

export const STEP_MS = Number(process.env.BENCH_STEP_MS ?? 50);
const MATH_ANSWER = `${'The working, line by line: 17 * 23 = 17 * 20 + 17 * 3 = 340 + 51 = 391. '.repeat(12)}So 17 * 23 = 391.`;
const MAIN_ANSWER = `${'The math sub-agent checked it step by step. '.repeat(6)}The product is 391.`;
const usage = { inputTokens: 200, outputTokens: 40 };

function script(request: ScriptedRequest) {
  const tools = request.prompt.filter((message) => message.role === 'tool').length;
  if (request.system.includes('## When to delegate')) {
    return tools === 0
      ? {
          text: 'Let me ask the math agent. ',
          toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23 and show the working.' } }],
          delayMs: STEP_MS,
          usage,
        }
      : { text: MAIN_ANSWER, delayMs: STEP_MS, usage };
  }
  return tools === 0
    ? { toolCalls: [{ name: 'vault_set', input: { key: 'product', value: '391' } }], delayMs: STEP_MS, usage }
    : { text: MATH_ANSWER, delayMs: STEP_MS, usage };
}

function benchCadre(): Promise<Cadre> {
  const home = mkdtempSync(join(tmpdir(), 'cadre-bench-server-'));
  return Cadre.create({
    env: { CADRE_HOME: home, CADRE_MODEL: 'scripted:bench' },
    cwd: home,
    models: { 'scripted:bench': new ScriptedModel(script) },
    flags: { limits: { maxConcurrency: 8 } },
  });
}

const [mode, count] = process.argv.slice(2);
if (mode === 'serve') {
  const cadre = await benchCadre();
  const server = await startServer({
    cadre,
    host: '127.0.0.1',
    port: 0,
    limits: { maxConcurrentChats: 10_000 },
  });
  process.stdout.write(`Cadre listening on ${server.url}\n`);
  process.once('SIGTERM', () => {
    server.close().then(() => process.exit(0));
  });
} else if (mode === 'inprocess') {
  const cadre = await benchCadre();
  const streams = Number(count ?? 200);
  const run = async (index: number) => {
    const started = performance.now();
    let events = 0;
    const answer = await cadre.ask({
      userId: 'local',
      sessionId: `inproc-${index}`,
      createSession: true,
      message: `What is 17 times 23? (${index})`,
      onEvent: () => {
        events++;
      },
    });
    await answer.result;
    return { ms: performance.now() - started, events };
  };
  // The same warm-up as the HTTP run, then all at once.
  await Promise.all(Array.from({ length: 5 }, (_, index) => run(-1 - index)));
  const cpu = process.cpuUsage();
  const results = await Promise.all(Array.from({ length: streams }, (_, index) => run(index)));
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  process.stdout.write(`${JSON.stringify({ results, cpuMs })}\n`);
  cadre.close();
} else {
  process.stderr.write('usage: node bench/server-load-worker.ts serve | inprocess N\n');
  process.exit(2);
}
