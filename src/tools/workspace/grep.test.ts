import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testToolContext } from '../../core/test-tool-context.ts';
import { workspaceTools } from './index.ts';

function grepIn(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'cadre-grep-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  const grep = workspaceTools(root).find((tool) => tool.name === 'grep')!;
  return (input: unknown) => grep.execute(grep.input.parse(input), testToolContext()) as Promise<any>;
}

describe('grep patterns from models', () => {
  it('runs a catastrophic-backtracking pattern in linear time', async () => {
    const grep = grepIn({ 'evil.txt': `${'a'.repeat(50_000)}b\n` });
    const started = performance.now();
    const result = await grep({ pattern: '(a+)+$' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result.matches).toEqual([]);
  });

  it('explains unsupported syntax and still finds ordinary patterns, case-insensitive with (?i)', async () => {
    const grep = grepIn({ 'code.ts': 'export function Alpha() {}\nconst beta = 1;\n' });
    await expect(grep({ pattern: '(?<=export )function' })).rejects.toThrow(/RE2 syntax; no lookaround/);
    const found = await grep({ pattern: '(?i)export (FUNCTION|class) \\w+' });
    expect(found.matches).toEqual([{ path: 'code.ts', line: 1, text: 'export function Alpha() {}' }]);
  });
});
