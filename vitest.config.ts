import { defineConfig } from 'vitest/config';

/**
 * Two tiers (CONTRIBUTING.md, "Tests in tiers"). `unit`: everything that runs inside the test process
 * (use cases, the server through app.request(), `cadre` through `cadreInProcess`), on threads without
 * per-file isolation, so a file costs its tests and not a fresh module graph. `e2e`: the tests whose subject
 * is a process boundary (signals, kills, pipes, Node flags, a browser, a real `cadre` binary), each file in
 * its own forked process. `npm test` runs both; `npm run test:unit` the first.
 */
const PROCESS_BOUNDARY = [
  'test/e2e/**/*.test.ts',
  // Where a folder moves, the file still matches.
  'src/**/node-flags.test.ts',
  'src/**/spool-kill.test.ts',
  'src/**/spool-recovery.test.ts',
  'test/**/store-durability.test.ts',
];

/**
 * Tests that measure the main thread's time (the web page's long tasks): they run after every other file and
 * one at a time, so no other test's processes share the two cores while they measure.
 */
const MEASURING = ['test/e2e/web-long-tasks.test.ts'];

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
  globalSetup: ['test/setup/temp-folder.ts'],
};

export default defineConfig({
  test: {
    // vitest's default on a 2-core machine is one worker; much e2e time is waiting on other processes (a
    // model fixture that takes a moment, a process starting), which a second worker overlaps. A third made
    // the timing-bound tests (sandbox and calculator time limits) miss on a machine shared with other work.
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts'],
          exclude: PROCESS_BOUNDARY,
          pool: 'threads',
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: 'e2e',
          include: PROCESS_BOUNDARY,
          exclude: MEASURING,
          pool: 'forks',
        },
      },
      {
        test: {
          ...shared,
          name: 'timing',
          include: MEASURING,
          pool: 'forks',
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
