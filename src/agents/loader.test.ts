import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeAgents } from './compose-agents.ts';
import { loadAgentCatalog, loadAgentFile } from './loader.ts';

const KNOWN_TOOLS = new Set([
  'calculate',
  'vault_get',
  'vault_set',
  'read_file',
  'grep',
  'glob',
  'web_search',
]);
const toolExists = (name: string) => KNOWN_TOOLS.has(name);

function write(dir: string, name: string, text: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('agent definition files', () => {
  it('names the file and the field for a bad value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    const path = write(dir, 'bad.md', '---\nname: bad\ndescription: d\nmaxTurns: many\n---\nBody');
    expect(() => loadAgentFile(path, 'project', toolExists)).toThrow(
      `${path}: maxTurns: Invalid input: expected number, received string`,
    );
    const context = write(dir, 'ctx.md', '---\nname: ctx\ndescription: d\ncontext: last-x\n---\nBody');
    expect(() => loadAgentFile(context, 'project')).toThrow(
      /context: one of "isolated", "full", "fork" or "last-N"/,
    );
  });

  it("refuses unread a file larger than the limit (a stranger's 20 MB system prompt), and loads the rest", () => {
    const home = mkdtempSync(join(tmpdir(), 'home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'project-'));
    const agents = join(cwd, '.cadre', 'agents');
    write(agents, 'huge.md', `---\nname: huge\ndescription: d\n---\n${'x'.repeat(300 * 1024)}`);
    write(agents, 'small.md', '---\nname: small\ndescription: d\n---\nBody');
    const catalog = loadAgentCatalog({ cadreHome: home, cwd });
    expect(catalog.agents.has('small')).toBe(true);
    expect(catalog.agents.has('huge')).toBe(false);
    expect(catalog.problems).toEqual([
      {
        path: join(agents, 'huge.md'),
        message: expect.stringMatching(
          /huge\.md: 30\d{4} bytes, more than the 262144 a definition may have \(config limits\.maxDefinitionBytes\)/,
        ),
      },
    ]);
    // The limit is the config's to move.
    const roomier = loadAgentCatalog({ cadreHome: home, cwd, maxDefinitionBytes: 1024 * 1024 });
    expect(roomier.agents.has('huge')).toBe(true);
    const tighter = loadAgentCatalog({ cadreHome: home, cwd, maxDefinitionBytes: 10 });
    expect(tighter.agents.has('small')).toBe(false);
    // The built-ins are Cadre's own and always load.
    expect(tighter.agents.has('main')).toBe(true);
  });

  it('refuses unknown tools in Cadre files and unknown fields', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    const path = write(dir, 'a.md', '---\nname: a\ndescription: d\ntools: calculate, teleport\n---\nBody');
    expect(() => loadAgentFile(path, 'project', toolExists)).toThrow(
      `${path}: tools: unknown tool "teleport"`,
    );
    const extra = write(dir, 'b.md', '---\nname: b\ndescription: d\ncolour: red\n---\nBody');
    expect(() => loadAgentFile(extra, 'project')).toThrow(/colour/);
    const noFrontMatter = write(dir, 'c.md', 'just text');
    expect(() => loadAgentFile(noFrontMatter, 'project')).toThrow(/no front matter/);
  });

  it('loads Claude Code files as they are, mapping tools and reporting the rest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    const path = write(
      dir,
      'reviewer.md',
      '---\nname: code-reviewer\ndescription: Reviews code\ntools: Read, Grep, Glob, Bash, Edit\nmodel: sonnet\ncolor: blue\n---\nYou review code.',
    );
    const loaded = loadAgentFile(path, 'claude', toolExists);
    expect(loaded.definition).toMatchObject({
      name: 'code-reviewer',
      tools: ['read_file', 'grep', 'glob'],
      model: 'inherit',
      instructions: 'You review code.',
    });
    expect(loaded.notes.join('\n')).toMatch(/Bash/);
    expect(loaded.notes.join('\n')).toMatch(/Edit/);
    expect(loaded.notes.join('\n')).toMatch(/color/);
  });

  it('lets later sources override earlier ones by name and reports bad files without losing the others', () => {
    const home = mkdtempSync(join(tmpdir(), 'home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'cwd-'));
    const builtinDir = mkdtempSync(join(tmpdir(), 'builtin-'));
    write(builtinDir, 'main.md', '---\nname: main\ndescription: main\ntools: [calculate]\n---\nBase.');
    write(builtinDir, 'math.md', '---\nname: math\ndescription: builtin math\n---\nA');
    write(join(home, 'agents'), 'math.md', '---\nname: math\ndescription: user math\n---\nB');
    write(join(cwd, '.cadre', 'agents'), 'math.md', '---\nname: math\ndescription: project math\n---\nC');
    write(join(cwd, '.cadre', 'agents'), 'broken.md', '---\nname: broken\n---\nno description');
    write(
      join(cwd, '.claude', 'agents'),
      'helper.md',
      '---\nname: helper\ndescription: claude helper\ntools: Read\n---\nD',
    );
    const catalog = loadAgentCatalog({ cadreHome: home, cwd, builtinDir, toolExists });
    expect(catalog.agents.get('math')).toMatchObject({
      definition: { description: 'project math' },
      source: { kind: 'project' },
      overrides: { kind: 'user' },
    });
    expect(catalog.agents.get('helper')!.source.kind).toBe('claude');
    expect(catalog.problems).toHaveLength(1);
    expect(catalog.problems[0]!.message).toMatch(/broken\.md: description/);

    const composed = composeAgents({ catalog: catalog.agents, settings: { helper: { enabled: false } } });
    const main = composed.get('main')!;
    expect(main.tools).toEqual(['calculate', 'math']);
    expect(main.instructions).toContain('`math`: project math');
    expect(main.instructions).not.toContain('helper');
    expect(main.instructions).toMatch(/Simple lookups .*use your own tools \(`calculate`\) yourself/);
  });

  it('every built-in definition is valid', () => {
    const catalog = loadAgentCatalog({ cadreHome: '/nonexistent', cwd: '/nonexistent' });
    expect(catalog.problems).toEqual([]);
    expect(catalog.agents.has('main')).toBe(true);
    expect(catalog.agents.has('math')).toBe(true);
  });
});
