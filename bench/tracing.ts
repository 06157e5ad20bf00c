import { startTracing, type Tracing } from '../src/app/telemetry/index.ts';
import { agentDefinitionSchema } from '../src/core/agent-definition.ts';
import { EventBus } from '../src/core/events.ts';
import { Runtime } from '../src/core/runtime.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { startOtlpReceiver } from '../test/fixtures/otlp-receiver.ts';
import { echoTool } from './core.ts';

const usage = { inputTokens: 100, outputTokens: 10 };

function reply(request: ScriptedRequest) {
  const done = request.prompt.filter((message) => message.role === 'tool').length;
  if (request.system.includes('MAIN')) {
    return done
      ? { text: 'done', usage }
      : { toolCalls: [{ name: 'worker', input: { task: 'work' } }], usage };
  }
  return done < 3
    ? { toolCalls: [{ name: 'echo', input: { text: `step ${done}` } }], usage }
    : { text: 'worker answer', usage };
}

function runtime(bus: EventBus) {
  const agents = new Map(
    [
      { name: 'main', description: 'main', instructions: 'MAIN', tools: ['worker'] },
      { name: 'worker', description: 'worker', instructions: 'WORKER', tools: ['echo'] },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  const model = new ScriptedModel(reply);
  return new Runtime({
    agents,
    tools: new ToolRegistry([echoTool]),
    resolveModel: () => model,
    mainModel: 'scripted:bench',
    bus,
  });
}

interface Setup {
  run: (task: string) => Promise<unknown>;
  close: () => Promise<number>;
}

async function setup(tracing: boolean): Promise<Setup> {
  const receiver = tracing ? await startOtlpReceiver() : undefined;
  const bus = new EventBus();
  const traces: Tracing | undefined = startTracing(
    receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } : {},
    bus,
    'bench',
  );
  const cadre = runtime(bus);
  return {
    run: (task) => cadre.run({ agent: 'main', task }),
    close: async () => {
      await traces?.shutdown();
      await receiver?.close();
      return receiver?.spans.length ?? 0;
    },
  };
}

async function round(target: Setup, iterations: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await target.run(`task ${i}`);
  return (performance.now() - started) / iterations;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Prints per-delegation time with tracing off and on (median of alternating rounds), and the overhead. */
export async function runTracingBench(
  iterations = Number(process.env.BENCH_ITERATIONS ?? 200),
): Promise<void> {
  const off = await setup(false);
  const on = await setup(true);
  await round(off, 20);
  await round(on, 20);
  const rounds = 7;
  const perRound = Math.max(5, Math.round(iterations / rounds));
  const offTimes: number[] = [];
  const onTimes: number[] = [];
  // Alternating rounds, so warm-up and machine load fall on both sides alike.
  for (let i = 0; i < rounds; i++) {
    offTimes.push(await round(off, perRound));
    onTimes.push(await round(on, perRound));
  }
  await off.close();
  const spans = await on.close();
  const offMs = median(offTimes);
  const onMs = median(onTimes);
  console.log(
    `Tracing (OpenTelemetry, OTLP/HTTP to a local receiver; median of ${rounds} rounds × ${perRound} trees)`,
  );
  console.log(`  per delegation, tracing off: ${offMs.toFixed(3)} ms`);
  console.log(`  per delegation, tracing on:  ${onMs.toFixed(3)} ms  (${spans} spans exported)`);
  console.log(
    `  overhead: ${(onMs - offMs).toFixed(3)} ms per delegation (${((onMs / offMs - 1) * 100).toFixed(1)}%)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runTracingBench();
