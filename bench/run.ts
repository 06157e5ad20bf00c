/**
 * `npm run bench`: every benchmark in one run. Each family's benchmark lives in its own file and can also
 * be run alone with `npx node bench/<file>.ts`. `BENCH_ONLY=documents` runs one family after the core;
 * `BENCH_CHUNKS=10000` limits the document store sizes.
 */
import { benchCore, printCore } from './core.ts';

const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
console.log(`Cadre benchmarks (node ${process.version}, ${iterations} iterations where it applies)\n`);
printCore(await benchCore(iterations));
{
  const { benchDelegationStore, printDelegationStore } = await import('./delegation-store.ts');
  for (const durability of ['step', 'batched'] as const) {
    for (const bytes of [0, 20_480])
      printDelegationStore(await benchDelegationStore(iterations, bytes, durability));
  }
  // The same delegation with answers a model would stream (2,400 characters, 100 deltas each).
  printDelegationStore(await benchDelegationStore(iterations, 0, 'step', 2_400));
}

const families: Array<{ name: string; run: () => Promise<void> }> = [
  { name: 'web', run: async () => (await import('./web-cache.ts')).runWebCacheBench() },
  { name: 'web-render', run: async () => void (await import('./web-render.ts')).runWebRenderBench() },
  { name: 'server', run: async () => (await import('./server-load.ts')).runServerLoadBench() },
  { name: 'tracing', run: async () => (await import('./tracing.ts')).runTracingBench(iterations) },
  { name: 'context', run: async () => (await import('./context-efficiency.ts')).runContextEfficiencyBench() },
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
