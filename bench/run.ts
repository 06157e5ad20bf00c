/**
 * `npm run bench`: every benchmark in one run. Each family's benchmark lives in its own file and can also
 * be run alone with `npx node bench/<file>.ts`. `BENCH_ONLY=documents` runs one family after the core;
 * `BENCH_CHUNKS=10000` limits the document store sizes; `BENCH_PROCESS_RUNS` sets how many fresh processes
 * the start-up family measures. The delegation ratio is a guard: past 1.25x at the median (step
 * durability, the default) the command exits with 1 (issue 24's decision).
 */
import { benchCore, printCore } from './core.ts';

const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
/** The most one stored delegation may cost against AI SDK's own loop, at the median. */
const DELEGATION_RATIO_GUARD = 1.25;
console.log(`Cadre benchmarks (node ${process.version}, ${iterations} iterations where it applies)\n`);
printCore(await benchCore(iterations));
{
  const { benchDelegationStore, printDelegationStore } = await import('./delegation-store.ts');
  for (const durability of ['step', 'batched'] as const) {
    for (const bytes of [0, 20_480]) {
      const result = await benchDelegationStore(iterations, bytes, durability);
      printDelegationStore(result);
      if (durability === 'step' && bytes === 0 && result.ratio.median > DELEGATION_RATIO_GUARD) {
        console.log(
          `  GUARD FAILED: one delegation costs ${result.ratio.median.toFixed(2)}x the AI SDK loop at the median, over ${DELEGATION_RATIO_GUARD}x`,
        );
        process.exitCode = 1;
      }
    }
  }
  // The same delegation with answers a model would stream (2,400 characters, 100 deltas each).
  printDelegationStore(await benchDelegationStore(iterations, 0, 'step', 2_400));
}

const families: Array<{ name: string; run: () => Promise<void> }> = [
  { name: 'startup', run: async () => (await import('./person-waiting.ts')).runPersonWaitingBench() },
  { name: 'runtime', run: async () => void (await import('./user-runtime.ts')) },
  { name: 'web', run: async () => (await import('./web-cache.ts')).runWebCacheBench() },
  { name: 'web-render', run: async () => void (await import('./web-render.ts')).runWebRenderBench() },
  { name: 'server', run: async () => (await import('./server-load.ts')).runServerLoadBench() },
  { name: 'tracing', run: async () => (await import('./tracing.ts')).runTracingBench(iterations) },
  { name: 'workers', run: async () => (await import('./workers.ts')).runWorkersBench() },
  { name: 'context', run: async () => (await import('./context-efficiency.ts')).runContextEfficiencyBench() },
  {
    name: 'prompt-cache',
    run: async () => void (await (await import('./prompt-cache.ts')).runPromptCacheBench()),
  },
  {
    name: 'documents',
    run: async () => {
      const { benchDocuments, printDocuments } = await import('./documents.ts');
      const checkpoints = process.env.BENCH_CHUNKS?.split(',').map(Number);
      printDocuments(await benchDocuments(checkpoints ? { checkpoints } : {}));
    },
  },
];
const only = process.env.BENCH_ONLY?.split(',');
for (const family of families) {
  if (only && !only.includes(family.name)) continue;
  console.log('');
  await family.run();
}
