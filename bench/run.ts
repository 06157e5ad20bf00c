/**
 * `npm run bench`: every benchmark in one run. Each family's benchmark lives in its own file and can also
 * be run alone with `npx node bench/<file>.ts`. `BENCH_ONLY=documents` runs one family after the core;
 * `BENCH_CHUNKS=10000` limits the document store sizes.
 */
import { benchCore, printCore } from './core.ts';

const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
console.log(`Cadre benchmarks (node ${process.version}, ${iterations} iterations where it applies)\n`);
printCore(await benchCore(iterations));

const families: Array<{ file: string; run: string }> = [
  { file: 'web-cache.ts', run: 'runWebCacheBench' },
  { file: 'context-efficiency.ts', run: 'runContextEfficiencyBench' },
  { file: 'documents.ts', run: 'runDocumentsBench' },
];
for (const family of families) {
  const path = new URL(`./${family.file}`, import.meta.url);
  if (!existsSync(path)) continue;
  const module = (await import(path.href)) as Record<string, () => Promise<void>>;
  const run = module[family.run];
  if (typeof run !== 'function') {
    console.log(
      `\n(bench/${family.file} does not export ${family.run}; run it alone with npx node bench/${family.file})`,
    );
    continue;
  }
  console.log('');
  await run();
}
