import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * DESIGN.md's rooms and which other rooms each may import. `core` depends on nothing; the domain rooms
 * on `core` (tools and store also on the document domain's types); `app` wires everything; the front
 * doors call `app` (and use `core`'s types). The CLI is the process entry point, so it may start the two
 * doors that are processes of their own (`cadre serve`, `cadre mcp`); nothing else imports them.
 */
const ALLOWED: Record<string, string[]> = {
  core: [],
  models: ['core'],
  config: ['core', 'tools'],
  agents: ['core', 'config'],
  documents: ['core'],
  tools: ['core', 'documents'],
  store: ['core', 'documents'],
  app: ['core', 'models', 'config', 'agents', 'documents', 'tools', 'store', 'mcp'],
  mcp: ['core', 'app', 'config', 'tools'],
  server: ['core', 'app', 'mcp'],
  cli: ['core', 'app', 'server', 'mcp'],
  '.': ['core', 'app', 'models'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function roomOf(path: string): string {
  const parts = relative(SRC, path).split('/');
  return parts.length > 1 ? parts[0]! : '.';
}

/** Every import (static, re-export or dynamic) of a relative path inside src/, as [file, target]. */
function imports(): Array<{ file: string; target: string; specifier: string }> {
  const found = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*)'([^']+)'/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.'))
        found.push({ file, target: normalize(join(dirname(file), specifier)), specifier });
      else found.push({ file, target: '', specifier });
    }
  }
  return found;
}

/** The relative imports of every source file: those that load code, or every one when `types` is set. */
function importGraph(types: boolean): Map<string, string[]> {
  const statement = types
    ? /^(?:import|export)\s+[^;]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/gms
    : /^(?:import|export)\s+(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms;
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(statement)].map((match) =>
      normalize(join(dirname(file), (match[1] ?? match[2])!)),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan's algorithm): each is a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(SRC, member));
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the import graph', () => {
  const all = imports();

  it("holds DESIGN.md's rules: each room imports only the rooms below it", () => {
    const broken = all
      .filter(({ target }) => target.startsWith(SRC))
      .filter(({ file, target }) => {
        const from = roomOf(file);
        const to = roomOf(target);
        return from !== to && !(ALLOWED[from] ?? []).includes(to);
      })
      .map(({ file, specifier }) => `${relative(SRC, file)} imports ${specifier}`);
    expect(broken).toEqual([]);
  });

  it('keeps node:sqlite inside store/', () => {
    const outside = all
      .filter(({ specifier }) => specifier === 'node:sqlite')
      .map(({ file }) => relative(SRC, file))
      .filter((file) => !file.startsWith('store/'));
    expect(outside).toEqual([]);
  });

  /**
   * In a cycle through imports that load code, the module loaded first can read another's exports before
   * they exist, which fails at start-up or not, depending on which file a process happens to import first.
   */
  it('keeps the store backends behind their interfaces: only store/ imports store/sqlite/ or store/postgres/', () => {
    const backends = ['store/sqlite/', 'store/postgres/'].map((folder) => join(SRC, folder));
    const outside = all
      .filter(({ target }) => backends.some((folder) => target.startsWith(folder)))
      .map(({ file, specifier }) => `${relative(SRC, file)} imports ${specifier}`)
      .filter((line) => !line.startsWith('store/'));
    expect(outside).toEqual([]);
  });

  it('has no cycles through imports that load code', () => {
    expect(cycles(importGraph(false))).toEqual([]);
  });

  /**
   * A cycle through type-only imports loads nothing, but it means neither side can be read, moved or
   * replaced without the other: the store's interfaces must stand apart from every backend, and a use
   * case apart from the composition root that wires it.
   */
  it('has no cycles anywhere, type-only imports included', () => {
    expect(cycles(importGraph(true))).toEqual([]);
  });

  it('lets the front doors (server, cli, mcp) use the runtime core only through core/index.ts', () => {
    const entry = join(SRC, 'core/index.ts');
    const reaching = all
      .filter(({ file }) => ['server', 'cli', 'mcp'].includes(roomOf(file)))
      .filter(({ target }) => target.startsWith(join(SRC, 'core/')) && target !== entry)
      .map(({ file, specifier }) => `${relative(SRC, file)} imports ${specifier}`);
    expect(reaching).toEqual([]);
  });

  it('knows every room there is', () => {
    const rooms = new Set(sourceFiles(SRC).map(roomOf));
    expect([...rooms].filter((room) => !(room in ALLOWED))).toEqual([]);
  });
});
