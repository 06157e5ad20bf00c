import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contentText, type FixtureScript, type RecordedRequest } from '../fixtures/openai-server.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const REPO = fileURLToPath(new URL('../fixtures/repo', import.meta.url));
const HANDBOOK = fileURLToPath(new URL('../fixtures/documents/handbook.md', import.meta.url));
const WORKSPACE_TOOLS = [
  'read_file',
  'glob',
  'grep',
  'lsp_diagnostics',
  'lsp_definition',
  'lsp_references',
  'lsp_hover',
  'lsp_completions',
  'docs_lookup',
];

const isMain = (system: string) => system.includes('## When to delegate');
const isResearch = (system: string) => system.includes("Cadre's research sub-agent");
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");
const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);

describe("the main agent's own tools and its routing guidance", () => {
  it('offers main web_search and web_fetch itself, and says when to look up and when to delegate', async () => {
    const { server, env } = await fixtureCadre(() => ({ text: 'Hello.' }));
    expect((await cadreInProcess(['ask', 'Hi'], env)).code).toBe(0);
    const [request] = server.requests;
    const offered = toolNames(request!);
    expect(offered).toEqual(
      expect.arrayContaining(['web_search', 'web_fetch', 'calculate', 'research', 'math']),
    );
    // Without a workspace, main has no code tools of its own (explorer still reads code for it).
    for (const name of WORKSPACE_TOOLS) expect(offered).not.toContain(name);
    const system = request!.system;
    expect(system).toMatch(/Simple lookups .*use your own tools \(`web_search`, `web_fetch`, `calculate`\)/);
    expect(system).toMatch(/One focused aspect per sub-agent call/);
    expect(system).toMatch(/Find the scope before you delegate it/);
    expect(system).toMatch(/never write a task like "the remaining items"/);
    expect(system).toMatch(/Comparisons: one call per side/);
    expect(system).not.toMatch(/read_file|docs_lookup/);
  });

  it('with --workspace, main reads the code itself with read_file, glob, grep, the LSP tools and docs_lookup', async () => {
    const { server, env } = await fixtureCadre(({ body }) => {
      const last = body.messages.at(-1);
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'read_file', arguments: { path: 'package.json' } }] };
      return { text: 'It is the fixture repo.' };
    });
    const result = await cadreInProcess(
      ['ask', '--json', '--workspace', REPO, 'What is this package called?'],
      env,
    );
    expect(result.code).toBe(0);
    const [first, second] = server.requests;
    expect(toolNames(first!)).toEqual(expect.arrayContaining([...WORKSPACE_TOOLS, 'web_search', 'explorer']));
    expect(first!.system).toMatch(
      /use your own tools \(.*`read_file`.*`lsp_completions`.*`docs_lookup`.*\) yourself/,
    );
    const toolMessage = second!.body.messages.find((message) => message.role === 'tool');
    expect(contentText(toolMessage?.content)).toContain('"path":"package.json"');
    const run = JSON.parse(result.stdout).run;
    expect(run.toolCalls).toEqual([expect.objectContaining({ name: 'read_file', ok: true })]);
    expect(run.children).toEqual([]);
  });
});

describe('research is equipped as the seeds had it, and the person reaches only the agents that need them', () => {
  const delegateBoth: FixtureScript = ({ body, system }) => {
    const last = body.messages.at(-1);
    if (isMain(system)) {
      if (last?.role === 'user')
        return {
          toolCalls: [
            { name: 'research', arguments: { task: 'What is the weather like here this week?' } },
            { name: 'math', arguments: { task: 'What is 2 + 2?' } },
          ],
        };
      return { text: 'Done.' };
    }
    return { text: 'Answer.' };
  };

  it('without documents: calculate and the vault, no search_documents; location and profile go to research only', async () => {
    const { server, env } = await fixtureCadre(delegateBoth, {
      person: { location: 'Lyon, France', profile: 'A cyclist who prefers metric units.' },
    });
    expect((await cadreInProcess(['ask', 'Weather, and 2+2?'], env)).code).toBe(0);
    const research = server.requests.find((request) => isResearch(request.system))!;
    const math = server.requests.find((request) => isMath(request.system))!;
    const main = server.requests.find((request) => isMain(request.system))!;
    expect(toolNames(research)).toEqual(
      expect.arrayContaining(['calculate', 'vault_set', 'vault_get', 'web_search']),
    );
    expect(toolNames(research)).not.toContain('search_documents');
    expect(research.system).toContain('Location: Lyon, France.');
    expect(research.system).toContain('A cyclist who prefers metric units.');
    expect(main.system).toContain('Location: Lyon, France.');
    expect(math.system).not.toContain('Lyon');
    expect(math.system).not.toContain('cyclist');
  });

  it('with documents: research searches them first; without person settings nobody gets an about-the-person part', async () => {
    const { server, env } = await fixtureCadre(delegateBoth);
    expect((await cadreInProcess(['docs', 'add', HANDBOOK], env)).code).toBe(0);
    expect((await cadreInProcess(['ask', 'Weather, and 2+2?'], env)).code).toBe(0);
    const research = server.requests.find((request) => isResearch(request.system))!;
    expect(toolNames(research)).toEqual(expect.arrayContaining(['search_documents', 'calculate']));
    expect(research.system).toMatch(
      /If you have `search_documents`, the person has documents .* search them first/s,
    );
    for (const request of server.requests) expect(request.system).not.toContain('About the person');
  });
});
