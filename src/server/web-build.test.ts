import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureWebApp } from './web-build.ts';

describe('building the web app when it is missing or out of date', () => {
  it('builds it into the folder once, leaves a current one alone, and rebuilds an old one', () => {
    const root = join(mkdtempSync(join(tmpdir(), 'cadre-web-')), 'dist');
    const lines: string[] = [];
    try {
      expect(ensureWebApp((line) => lines.push(line), root)).toBe(true);
      expect(lines).toEqual([expect.stringContaining('Building the web app')]);
      expect(readFileSync(join(root, 'index.html'), 'utf8')).toContain('<div id="root">');
      expect(ensureWebApp((line) => lines.push(line), root)).toBe(true);
      expect(lines).toHaveLength(1);
      // A build older than its sources (a checkout updated without npm install) is rebuilt, whole.
      const past = new Date(Date.now() - 24 * 3600_000);
      utimesSync(join(root, 'index.html'), past, past);
      expect(ensureWebApp((line) => lines.push(line), root)).toBe(true);
      expect(lines[1]).toContain('older than its sources');
      expect(readFileSync(join(root, 'index.html'), 'utf8')).toContain('<div id="root">');
    } finally {
      rmSync(join(root, '..'), { recursive: true, force: true });
    }
    expect(existsSync(root)).toBe(false);
  }, 60_000);
});
