import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureWebApp } from './web-build.ts';

describe('building the web app when it is missing', () => {
  it('builds it into the folder once, and leaves a built one alone', () => {
    const root = join(mkdtempSync(join(tmpdir(), 'cadre-web-')), 'dist');
    const lines: string[] = [];
    try {
      expect(ensureWebApp((line) => lines.push(line), root)).toBe(true);
      expect(lines).toEqual([expect.stringContaining('Building the web app')]);
      expect(readFileSync(join(root, 'index.html'), 'utf8')).toContain('<div id="root">');
      expect(ensureWebApp((line) => lines.push(line), root)).toBe(true);
      expect(lines).toHaveLength(1);
    } finally {
      rmSync(join(root, '..'), { recursive: true, force: true });
    }
    expect(existsSync(root)).toBe(false);
  }, 60_000);
});
