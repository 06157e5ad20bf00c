import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentFile } from '../src/agents/loader.ts';
import { agentDefinitionSchema } from '../src/core/agent-definition.ts';
import { Runtime } from '../src/core/runtime.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { calculateTool } from '../src/tools/compute/calculate.ts';
import { knowledgeTools } from '../src/tools/knowledge/index.ts';
import { webTools } from '../src/tools/web/index.ts';
import { type ApiFixtures, startApiFixtures } from './fixtures/apis/api-fixtures.ts';
import { fixtureNetworkDeps } from './fixtures/apis/network-test-deps.ts';

/**
 * The research agent end to end, on fixture APIs and a scripted model: main delegates, research calls
 * its tools, cites one URL its tools returned and one it made up, and the envelope's sources say which.
 */
let fixtures: ApiFixtures;
beforeAll(async () => {
  fixtures = await startApiFixtures();
});
afterAll(async () => fixtures.close());

const AGENTS_DIR = join(import.meta.dirname, '..', 'src', 'agents');

function registry() {
  const { deps } = fixtureNetworkDeps({ ...fixtures.env });
  return new ToolRegistry([calculateTool, ...webTools(deps), ...knowledgeTools(deps)]);
}

describe('built-in agent definitions', () => {
  it.each(['research', 'science', 'math'])('%s.md loads and names only tools that exist', (name) => {
    const tools = registry();
    const loaded = loadAgentFile(
      join(AGENTS_DIR, `${name}.md`),
      'builtin',
      (tool) => ['run_js', 'vault_set', 'vault_get', 'search_documents'].includes(tool) || tools.has(tool),
    );
    expect(loaded.definition.name).toBe(name);
    if (name === 'math')
      expect(loaded.definition.tools).toEqual(
        expect.arrayContaining(['wolfram_query', 'stackexchange_search']),
      );
  });
});

describe('research agent', () => {
  it('returns cited bullet points whose sources are verified against its own tool results', async () => {
    const tools = registry();
    const research = loadAgentFile(join(AGENTS_DIR, 'research.md'), 'builtin').definition;
    const main = agentDefinitionSchema.parse({
      name: 'main',
      description: 'main agent',
      instructions: 'I am main.',
      tools: ['research'],
    });
    const wikipedia = fixtures.env.CADRE_ENDPOINT_WIKIPEDIA;
    const invented = 'https://made-up.example/turing-facts';
    const researchSaw: ScriptedRequest[] = [];
    const mainSaw: ScriptedRequest[] = [];
    const model = new ScriptedModel((request) => {
      const isMain = request.toolNames.includes('research');
      if (isMain) {
        mainSaw.push(request);
        return request.toolResults.length === 0
          ? { toolCalls: [{ name: 'research', input: { task: 'Who was Alan Turing? Cite sources.' } }] }
          : {
              text: [
                `Turing was an English mathematician ([Wikipedia](${wikipedia}/wiki/Alan_Turing)).`,
                `He ran marathons (${invented}); see also https://main-made-this-up.example/turing.`,
              ].join(' '),
            };
      }
      researchSaw.push(request);
      if (request.toolResults.length === 0) {
        return {
          toolCalls: [
            { name: 'wikipedia_search', input: { query: 'Alan Turing', limit: 2 } },
            { name: 'web_search', input: { query: 'Alan Turing biography' } },
          ],
        };
      }
      return {
        text: [
          `- Alan Turing was an English mathematician and computer scientist ([Wikipedia](${wikipedia}/wiki/Alan_Turing)).`,
          '- He kept an online scrapbook (https://www.turing.org.uk/).',
          `- He liked long-distance running ([Turing facts](${invented})).`,
        ].join('\n'),
      };
    });
    const runtime = new Runtime({
      agents: new Map([
        ['main', main],
        ['research', research],
      ]),
      tools,
      resolveModel: () => model,
      mainModel: 'scripted:x',
    });

    const outcome = await runtime.run({ agent: 'main', task: 'Tell me about Alan Turing.' });

    expect(outcome.envelope.status).toBe('ok');
    const child = outcome.tree.children[0]!;
    expect(child.agent).toBe('research');
    expect(child.status).toBe('ok');
    expect(child.toolCalls.map((call) => [call.name, call.ok])).toEqual([
      ['wikipedia_search', true],
      ['web_search', true],
    ]);
    expect(child.sources).toEqual([
      { url: `${wikipedia}/wiki/Alan_Turing`, title: 'Wikipedia', verified: true },
      { url: 'https://www.turing.org.uk', verified: true },
      { url: invented, title: 'Turing facts', verified: false },
    ]);
    // What the research model read of its tool results was marked as untrusted data.
    const results = researchSaw.at(-1)?.toolResults ?? [];
    expect(results).toHaveLength(2);
    for (const result of results) expect(JSON.stringify(result.output)).toContain('<untrusted-content tool=');

    // Main was told which of research's links its tools really returned.
    const mainRead = JSON.stringify(mainSaw.at(-1)?.toolResults[0]?.output);
    expect(mainRead).toContain(`{"url":"${invented}","title":"Turing facts","verified":false}`);
    expect(mainRead).toContain('{"url":"https://www.turing.org.uk","verified":true}');
    // The answer's own links are checked against what the tree fetched: a link research only wrote, or
    // one main made up, stays unverified one level up.
    expect(outcome.envelope.sources).toEqual([
      { url: `${wikipedia}/wiki/Alan_Turing`, title: 'Wikipedia', verified: true },
      { url: invented, verified: false },
      { url: 'https://main-made-this-up.example/turing', verified: false },
    ]);
    expect(outcome.tree.sources).toEqual(outcome.envelope.sources);
  });
});
