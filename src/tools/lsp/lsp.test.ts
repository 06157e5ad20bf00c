import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testToolContext, toolCaller } from '../../core/test-tool-context.ts';
import { Workspace } from '../workspace/confine.ts';
import { LspManager } from './manager.ts';
import { describeLocation, lspTools } from './tools.ts';

const fixture = fileURLToPath(new URL('../../../test/fixtures/ts-project', import.meta.url));
let root: string;
let manager: LspManager;
let call: ReturnType<typeof toolCaller>;

const context = testToolContext({ agent: 'explorer' });

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'cadre-lsp-'));
  cpSync(fixture, root, { recursive: true });
  manager = new LspManager({ idleMs: 60_000 });
  call = toolCaller(lspTools(new Workspace(root), manager), context);
});

afterAll(async () => {
  await manager.stopAll();
  rmSync(root, { recursive: true, force: true });
});

describe('LSP tools against typescript-language-server', () => {
  it('reports the type error in a broken file and none in a clean one', async () => {
    const broken = await call('lsp_diagnostics', { path: 'src/broken.ts' });
    expect(broken.path).toBe('src/broken.ts');
    expect(broken.diagnostics).toEqual([
      expect.objectContaining({
        line: 3,
        column: 14,
        severity: 'error',
        code: 2322,
        message: expect.stringMatching(/number.*string/),
      }),
    ]);
    const clean = await call('lsp_diagnostics', { path: 'src/main.ts' });
    expect(clean.diagnostics).toEqual([]);
    expect(manager.isRunning(new Workspace(root).root)).toBe(true);
  });

  it('offers completions at a position: the members of a type after a dot', async () => {
    // geometry.ts line 9: `  return Math.hypot(a.x - b.x, a.y - b.y);` — column 23 is just after `a.`.
    const result = await call('lsp_completions', { path: 'src/geometry.ts', line: 9, column: 23 });
    expect(result.completions).toEqual([
      { label: 'x', kind: 'field' },
      { label: 'y', kind: 'field' },
    ]);
    const math = await call('lsp_completions', {
      path: 'src/geometry.ts',
      line: 9,
      column: 15,
      max_results: 1,
    });
    expect(math.completions).toHaveLength(1);
    expect(math.truncated).toBeGreaterThan(5);
  });

  it('goes to a definition across files', async () => {
    const result = await call('lsp_definition', { path: 'src/main.ts', line: 6, column: 26 });
    expect(result.definitions).toEqual([
      {
        path: 'src/geometry.ts',
        line: 8,
        column: 17,
        text: 'export function distance(a: Point, b: Point): number {',
      },
    ]);
  });

  it('finds every reference', async () => {
    const result = await call('lsp_references', { path: 'src/geometry.ts', line: 8, column: 17 });
    const places = result.references
      .map((ref: { path: string; line: number }) => `${ref.path}:${ref.line}`)
      .sort();
    expect(places).toEqual([
      'src/broken.ts:1',
      'src/broken.ts:3',
      'src/geometry.ts:8',
      'src/main.ts:1',
      'src/main.ts:6',
      'src/main.ts:7',
    ]);
  });

  it('hovers with the type and documentation', async () => {
    const result = await call('lsp_hover', { path: 'src/main.ts', line: 6, column: 26 });
    expect(result.hover).toContain('distance(a: Point, b: Point): number');
    expect(result.hover).toContain('Straight-line distance');
  });

  it('stays inside the workspace and refuses unserved file types', async () => {
    await expect(call('lsp_hover', { path: '../outside.ts', line: 1, column: 1 })).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(call('lsp_diagnostics', { path: 'tsconfig.json' })).rejects.toThrow(/no language server/);
  });

  it('stops an idle server and starts it again on demand', async () => {
    const quick = new LspManager({ idleMs: 1 });
    const quickTools = new Map(lspTools(new Workspace(root), quick).map((tool) => [tool.name, tool]));
    const hover = quickTools.get('lsp_hover')!;
    const input = { path: 'src/main.ts', line: 3, column: 7 };
    expect(((await hover.execute(input, context)) as { hover: string }).hover).toContain(
      'const origin: Point',
    );
    await expect
      .poll(() => quick.isRunning(new Workspace(root).root), { interval: 20, timeout: 10_000 })
      .toBe(false);
    expect(((await hover.execute(input, context)) as { hover: string }).hover).toContain(
      'const origin: Point',
    );
    await quick.stopAll();
  });
});

describe('LSP paths stay inside the workspace', () => {
  it('a location reached through a symlink out of the root is external, with no preview', async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'cadre-lsp-link-'));
    try {
      mkdirSync(path.join(base, 'ws'));
      mkdirSync(path.join(base, 'private'));
      writeFileSync(path.join(base, 'private', 'secret.ts'), 'export const token = "OUTSIDE-SECRET";\n');
      symlinkSync(path.join(base, 'private'), path.join(base, 'ws', 'vendor'));
      const workspace = new Workspace(path.join(base, 'ws'));
      const uri = pathToFileURL(path.join(workspace.root, 'vendor', 'secret.ts')).href;
      const range = { start: { line: 0, character: 13 }, end: { line: 0, character: 18 } };
      const described = await describeLocation(workspace, { uri, range });
      expect(described).toEqual({ external: 'secret.ts', line: 1, column: 14 });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('refuses a named pipe before a language server is asked to open it', async () => {
    const pipe = path.join(root, 'src', 'pipe.ts');
    execFileSync('mkfifo', [pipe]);
    try {
      await expect(call('lsp_diagnostics', { path: 'src/pipe.ts' })).rejects.toThrow(/not a regular file/);
    } finally {
      rmSync(pipe);
    }
  });
});
