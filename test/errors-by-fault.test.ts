import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * Code that runs inside a worker thread or a sandbox: its errors reach Cadre as text across the thread
 * boundary (and are classed there), so a plain Error is all they can be. The test helper's errors are
 * for tests only.
 */
const PLAIN_ERRORS_ALLOWED = new Set([
  'tools/sandbox/worker.ts',
  'tools/compute/math-worker.ts',
  // The mathjs instance the math worker evaluates with: its refusals cross the thread as text too.
  'tools/compute/safe-math.ts',
  'core/test-tool-context.ts',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('errors by fault', () => {
  it('throws only CadreError subclasses (UserError, ModelBehaviorError, SystemError) in src/', () => {
    const bare = sourceFiles(SRC).flatMap((file) => {
      const name = relative(SRC, file);
      if (PLAIN_ERRORS_ALLOWED.has(name)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          /throw new (Type)?Error\(/.test(line) ? [`${name}:${index + 1}: ${line.trim()}`] : [],
        );
    });
    expect(bare).toEqual([]);
  });
});
