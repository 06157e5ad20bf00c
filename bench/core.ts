/**
 * Core benchmark: Cadre's per-step and per-delegation overhead against a plain AI SDK ToolLoopAgent
 * stream with the same scripted model, while Cadre persists every event to SQLite; and a fan-out of
 * 8 sub-agents × 3 model calls at 50 ms each against the ideal 150 ms.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStepCount, type LanguageModel, ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';
import { agentDefinitionSchema } from '../src/core/agent-definition.ts';
import { Runtime } from '../src/core/runtime.ts';
import { defineTool } from '../src/core/tool.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';

const STEPS = 6;
/** The benchmarks' one tool: gives back its text. */
export const echoTool = defineTool({
  name: 'echo',
  family: 'bench',
  description: 'echo',
  input: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ text }),
});

/** A sub-agent that calls `echo` (steps - 1) times, then answers. */
const usage = { inputTokens: 100, outputTokens: 10 };

function workerReply(request: ScriptedRequest, steps: number, delayMs = 0) {
  const done = request.prompt.filter((message) => message.role === 'tool').length;
  if (done < steps - 1)
    return { toolCalls: [{ name: 'echo', input: { text: `step ${done}` } }], delayMs, usage };
  return { text: 'worker answer', delayMs, usage };
}

function cadreRuntime(model: LanguageModel, store: Store, maxConcurrency = 8) {
  const agents = new Map(
    [
      { name: 'main', description: 'main', instructions: 'MAIN', tools: ['worker', 'echo'], maxTurns: 20 },
      { name: 'worker', description: 'worker', instructions: 'WORKER', tools: ['echo'], maxTurns: 20 },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  const runtime = new Runtime({
    agents,
    tools: new ToolRegistry([echoTool]),
    resolveModel: () => model,
    mainModel: 'scripted:bench',
    limits: { maxConcurrency, maxFanOut: 16 },
  });
  runtime.bus.subscribe((event) => store.runs.record(event));
  return runtime;
}

function sdkEcho(output: (text: string) => unknown = (text) => ({ text })) {
  return tool({
    description: 'echo',
    inputSchema: z.object({ text: z.string() }),
    execute: async ({ text }) => output(text),
  });
}

/**
 * The plain AI SDK way to delegate: a ToolLoopAgent whose tool streams another ToolLoopAgent. The worker's
 * `echo` tool answers with `output(text)` (by default `{text}`), so benchmarks can vary its size.
 */
export function sdkNestedMain(
  model: LanguageModel,
  output: (text: string) => unknown = (text) => ({ text }),
) {
  const worker = new ToolLoopAgent({
    model,
    instructions: 'WORKER',
    tools: { echo: sdkEcho(output) },
    stopWhen: isStepCount(20),
  });
  return new ToolLoopAgent({
    model,
    instructions: 'MAIN',
    stopWhen: isStepCount(20),
    tools: {
      worker: tool({
        description: 'worker',
        inputSchema: z.object({ task: z.string() }),
        execute: async ({ task }, { abortSignal }) => {
          const result = await worker.stream({ prompt: task, abortSignal } as Parameters<
            typeof worker.stream
          >[0]);
          for await (const _part of result.stream) {
            // drain
          }
          return { text: await result.text };
        },
      }),
    },
  });
}

async function consume(agent: ToolLoopAgent<any, any, any>, prompt: string) {
  const result = await agent.stream({ prompt } as Parameters<typeof agent.stream>[0]);
  for await (const _part of result.stream) {
    // drain
  }
  return (await result.steps).length;
}

async function time(iterations: number, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(20, iterations); i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

export interface CoreBenchResult {
  stepMs: { cadre: number; sdk: number; ratio: number };
  delegationMs: { cadre: number; sdk: number; ratio: number };
  fanOutMs: { cadre: number; sdk: number; ideal: number; ratio: number };
}

export async function benchCore(iterations = 200): Promise<CoreBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cadre-bench-'));
  const store = openSqliteStore(join(dir, 'cadre.db'));

  // 1. One agent, STEPS model calls (STEPS - 1 tool calls), no delegation.
  const loopModel = new ScriptedModel((request) => workerReply(request, STEPS));
  const cadre = cadreRuntime(loopModel, store);
  const sdkAgent = new ToolLoopAgent({
    model: loopModel,
    instructions: 'WORKER',
    tools: { echo: sdkEcho() },
    stopWhen: isStepCount(20),
  });
  const sdkLoop = await time(iterations, () => consume(sdkAgent, 'go'));
  const cadreLoop = await time(iterations, () => cadre.run({ agent: 'worker', task: 'go' }));
  await store.runs.flush();

  // 2. Main delegates once to a worker that makes STEPS calls; the SDK baseline nests a ToolLoopAgent in a tool.
  const treeModel = new ScriptedModel((request) => {
    if (request.system.includes('MAIN')) {
      return request.toolResults.length
        ? { text: 'main answer', usage }
        : { toolCalls: [{ name: 'worker', input: { task: 'work' } }], usage };
    }
    return workerReply(request, STEPS);
  });
  const cadreTree = cadreRuntime(treeModel, store);
  const sdkMain = sdkNestedMain(treeModel);
  const sdkDelegation = await time(iterations, () => consume(sdkMain, 'delegate'));
  const cadreDelegation = await time(iterations, () => cadreTree.run({ agent: 'main', task: 'delegate' }));
  await store.runs.flush();

  // 3. Fan-out: 8 workers × 3 calls at 50 ms each; ideal is 150 ms (main's own calls are instant).
  const fanModel = new ScriptedModel((request) => {
    if (request.system.includes('MAIN')) {
      if (request.toolResults.length) return { text: 'all done', usage };
      return {
        toolCalls: Array.from({ length: 8 }, (_, n) => ({ name: 'worker', input: { task: `part ${n}` } })),
        usage,
      };
    }
    return workerReply(request, 3, 50);
  });
  const cadreFan = cadreRuntime(fanModel, store, 8);
  const fanIterations = Math.max(5, Math.floor(iterations / 20));
  const fan = await time(fanIterations, () => cadreFan.run({ agent: 'main', task: 'fan out' }));
  const sdkFanMain = sdkNestedMain(fanModel);
  const sdkFan = await time(fanIterations, () => consume(sdkFanMain, 'fan out'));
  await store.close();

  const modelCallsPerLoop = STEPS;
  return {
    stepMs: {
      cadre: cadreLoop / modelCallsPerLoop,
      sdk: sdkLoop / modelCallsPerLoop,
      ratio: cadreLoop / sdkLoop,
    },
    delegationMs: { cadre: cadreDelegation, sdk: sdkDelegation, ratio: cadreDelegation / sdkDelegation },
    fanOutMs: { cadre: fan, sdk: sdkFan, ideal: 150, ratio: fan / 150 },
  };
}

export function printCore(result: CoreBenchResult): void {
  const f = (n: number) => n.toFixed(3);
  console.log('core: per step (one agent, 6 model calls, events persisted for Cadre)');
  console.log(
    `  cadre ${f(result.stepMs.cadre)} ms/step   ai-sdk ${f(result.stepMs.sdk)} ms/step   ratio ${result.stepMs.ratio.toFixed(2)}x`,
  );
  console.log('core: one delegation (main 2 calls + sub-agent 6 calls)');
  console.log(
    `  cadre ${f(result.delegationMs.cadre)} ms   ai-sdk nested ToolLoopAgent ${f(result.delegationMs.sdk)} ms   ratio ${result.delegationMs.ratio.toFixed(2)}x (target <= 1.25x)`,
  );
  console.log('core: fan-out 8 sub-agents x 3 calls x 50 ms');
  console.log(
    `  cadre ${result.fanOutMs.cadre.toFixed(1)} ms   ideal 150 ms   ratio ${result.fanOutMs.ratio.toFixed(3)}x (target <= 1.1x)   ai-sdk nested ${result.fanOutMs.sdk.toFixed(1)} ms (${(result.fanOutMs.sdk / 150).toFixed(3)}x)`,
  );
}

if (import.meta.main) printCore(await benchCore(Number(process.env.BENCH_ITERATIONS ?? 200)));
