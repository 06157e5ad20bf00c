import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * vitest global setup: every test's temporary files go into one folder made for this test run (TMPDIR is
 * what `os.tmpdir()` reads, in the test processes and in the `cadre` processes they start), and the whole
 * folder is removed when the run ends, so tests leave nothing behind in the machine's temp folder.
 */
export default function setup(): () => void {
  // Node's compile cache for every thread and process the tests start, where `cadre` keeps its own (the
  // machine's temp folder, not this run's): a worker thread (a document parser, the calculator, the
  // sandbox) otherwise strips its TypeScript and compiles its modules again each time it boots.
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'node-compile-cache');
  const folder = mkdtempSync(join(tmpdir(), 'cadre-tests-'));
  process.env.TMPDIR = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
