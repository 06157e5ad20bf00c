import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../../../test/fixtures/openai-server.ts';
import { testServer } from '../../../test/helpers/server.ts';

const patch = (body: unknown) => ({
  method: 'PATCH',
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A local server answering each path with JSON, counting the requests it saw (with their headers). */
async function jsonServer(routes: Record<string, unknown>) {
  const seen: Array<{ url: string; headers: Record<string, unknown> }> = [];
  const server: Server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const path = (req.url ?? '').split('?')[0] ?? '';
    const body = routes[path];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not here' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('GET /api/models', () => {
  it("lists each set-up provider's own models, keeps them a while, and names what the others need", async () => {
    const compatible = await startOpenAIServer(() => ({ text: 'hi' }));
    closers.push(() => compatible.close());
    const anthropic = await jsonServer({
      '/v1/models': { data: [{ id: 'claude-sonnet-4-5', type: 'model' }, { id: 'claude-haiku-4-5' }] },
    });
    const google = await jsonServer({
      '/v1beta/models': {
        models: [
          { name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent'] },
          { name: 'models/text-embedding-004', supportedGenerationMethods: ['embedContent'] },
        ],
      },
    });
    const ollama = await jsonServer({ '/api/tags': { models: [{ name: 'qwen3:latest' }] } });
    const { app } = await testServer([{ text: 'hi' }], {
      env: {
        CADRE_COMPATIBLE_BASE_URL: compatible.baseURL,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
        GOOGLE_GENERATIVE_AI_API_KEY: 'g-test',
        GOOGLE_GENERATIVE_AI_BASE_URL: `${google.url}/v1beta`,
        OLLAMA_HOST: ollama.url,
      },
    });
    const response = await app.request('/api/models');
    expect(response.status).toBe(200);
    const listed = await response.json();
    expect(listed.providers).toEqual([
      {
        provider: 'anthropic',
        models: ['anthropic:claude-haiku-4-5', 'anthropic:claude-sonnet-4-5'],
        source: 'provider',
      },
      { provider: 'google', models: ['google:gemini-2.5-flash'], source: 'provider' },
      { provider: 'ollama', models: ['ollama:qwen3:latest'], source: 'provider' },
      { provider: 'compatible', models: ['compatible:fixture'], source: 'provider' },
    ]);
    expect(listed.unconfigured).toEqual([
      { provider: 'openai', variable: 'OPENAI_API_KEY' },
      { provider: 'openrouter', variable: 'OPENROUTER_API_KEY' },
    ]);
    // Each provider was asked with its own key, the way its API wants it.
    expect(anthropic.seen[0]?.headers).toMatchObject({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
    });
    expect(google.seen[0]?.headers).toMatchObject({ 'x-goog-api-key': 'g-test' });
    // A second look is answered from the cache, not by asking every provider again.
    await app.request('/api/models');
    expect(anthropic.seen).toHaveLength(1);
    expect(ollama.seen).toHaveLength(1);
  });

  it('falls back to the models the config names when a provider does not answer its list', async () => {
    const broken = await jsonServer({});
    const { app } = await testServer([{ text: 'hi' }], {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${broken.url}/v1` },
      config: { subagentModel: 'openai:gpt-5-nano', agents: { research: { model: 'openai:gpt-5-mini' } } },
    });
    const listed = await (await app.request('/api/models')).json();
    expect(listed.providers).toEqual([
      {
        provider: 'openai',
        models: ['openai:gpt-5-mini', 'openai:gpt-5-nano'],
        source: 'config',
        error: expect.stringContaining('404'),
      },
    ]);
  });
});

describe('choosing a model', () => {
  it('refuses at once a model whose provider has no key here, naming the variable, and keeps the setting', async () => {
    const { app } = await testServer([{ text: 'hi' }], { env: { OPENAI_API_KEY: 'sk-test' } });
    const refused = await app.request('/api/agents/main', patch({ model: 'anthropic:claude-sonnet-4-5' }));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: 'model_unavailable', message: expect.stringContaining('ANTHROPIC_API_KEY') },
    });
    const compatible = await app.request('/api/agents/research', patch({ model: 'compatible:x' }));
    expect(compatible.status).toBe(400);
    expect(await compatible.text()).toContain('CADRE_COMPATIBLE_BASE_URL');
    const agents = (await (await app.request('/api/agents')).json()).agents as Array<{
      name: string;
      effectiveModel: string;
    }>;
    expect(agents.find((agent) => agent.name === 'main')?.effectiveModel).toBe('scripted:test');
    // A provider that is set up, and Ollama (a local server by default), are accepted.
    expect((await app.request('/api/agents/main', patch({ model: 'openai:gpt-5-mini' }))).status).toBe(200);
    expect((await app.request('/api/agents/math', patch({ model: 'ollama:qwen3' }))).status).toBe(200);
  });
});
