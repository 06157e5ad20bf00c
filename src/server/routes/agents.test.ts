import { describe, expect, it } from 'vitest';
import { chatBody, isMain, postJson, readChunks, testServer } from '../../../test/helpers/server.ts';
import type { ScriptedRequest } from '../../models/scripted-model.ts';

const patch = (body: unknown) => ({
  method: 'PATCH',
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});

describe('GET and PATCH /api/agents', () => {
  it('lists every agent with its description, tools, model and limits', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const { agents } = (await (await app.request('/api/agents')).json()) as {
      agents: Array<{
        name: string;
        description: string;
        tools: string[];
        enabled: boolean;
        model: string;
        effectiveModel: string;
        context: string;
        background: boolean | 'allowed';
      }>;
    };
    const math = agents.find((agent) => agent.name === 'math')!;
    expect(math).toMatchObject({ context: 'isolated', background: false });
    expect(math.description).not.toBe('');
    expect(math.tools).toContain('calculate');
    expect(math.enabled).toBe(true);
    expect(math.effectiveModel).toBe('scripted:test');
    expect(agents.map((agent) => agent.name)).toEqual(
      expect.arrayContaining(['main', 'research', 'planner']),
    );
  });

  it("sets an agent's reasoning, which its next run asks the provider for, and refuses an unknown effort", async () => {
    const seen: unknown[] = [];
    const { app } = await testServer((request: ScriptedRequest) => {
      if (isMain(request.system)) seen.push(request.options.reasoning);
      return { text: 'ok' };
    });
    const response = await app.request('/api/agents/main', patch({ reasoning: 'high' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ agent: { name: 'main', reasoning: 'high' } });
    await readChunks(
      await app.request('/api/chat', {
        method: 'POST',
        body: chatBody('s1', 'one', 'u1'),
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(seen).toEqual(['high']);
    expect((await app.request('/api/agents/main', patch({ reasoning: 'turbo' }))).status).toBe(400);
    const reset = await (await app.request('/api/agents/main', patch({ reasoning: null }))).json();
    expect(reset.agent).not.toHaveProperty('reasoning');
  });

  it('switching an agent off removes it from the main agent’s tools from the next message on', async () => {
    const toolsSeen: string[][] = [];
    const { app } = await testServer((request: ScriptedRequest) => {
      if (isMain(request.system)) toolsSeen.push(request.toolNames);
      return { text: 'ok' };
    });
    await readChunks(
      await app.request('/api/chat', {
        method: 'POST',
        body: chatBody('s1', 'one', 'u1'),
        headers: { 'content-type': 'application/json' },
      }),
    );
    const response = await app.request('/api/agents/research', patch({ enabled: false }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ agent: { name: 'research', enabled: false } });
    await readChunks(
      await app.request('/api/chat', {
        method: 'POST',
        body: chatBody('s1', 'two', 'u2'),
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(toolsSeen[0]).toContain('research');
    expect(toolsSeen[1]).not.toContain('research');
    expect(toolsSeen[1]).toContain('math');
  });

  it('saves a model, returns to the definition’s with null, and refuses bad input with the field named', async () => {
    const { app } = await testServer([{ text: 'hi' }], { env: { OPENAI_API_KEY: 'sk-test' } });
    const saved = await (await app.request('/api/agents/math', patch({ model: 'openai:gpt-5-nano' }))).json();
    expect(saved).toMatchObject({
      agent: { model: 'openai:gpt-5-nano', effectiveModel: 'openai:gpt-5-nano' },
    });
    const reset = await (await app.request('/api/agents/math', patch({ model: null }))).json();
    expect(reset).toMatchObject({ agent: { effectiveModel: 'scripted:test' } });

    const bad = await app.request('/api/agents/math', patch({ model: 'gpt-5' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { message: expect.stringContaining('provider:model') } });
    // A provider no run could use is refused at once, naming the field and the providers there are.
    const unknown = await app.request('/api/agents/math', patch({ model: 'opneai:gpt-5-mini' }));
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error: {
        message: expect.stringMatching(/model "opneai:gpt-5-mini": Unknown model provider "opneai".*openai/),
      },
    });
    const kept = await (await app.request('/api/agents')).json();
    expect(JSON.stringify(kept)).not.toContain('opneai');
    expect((await app.request('/api/agents/nobody', patch({ enabled: false }))).status).toBe(404);
    expect((await app.request('/api/agents/main', patch({ enabled: false }))).status).toBe(400);
    expect((await app.request('/api/agents/math', patch({ colour: 'red' }))).status).toBe(400);
  });
});

describe("a per-agent timeout and main's own model", () => {
  it("saves a timeout that limits every run of the agent, and lets main's model be chosen", async () => {
    const { app } = await testServer(
      (request: ScriptedRequest) =>
        isMain(request.system) && request.prompt.at(-1)?.role === 'user'
          ? { toolCalls: [{ name: 'math', input: { task: 'slow' } }] }
          : isMain(request.system)
            ? { text: `main read: ${JSON.stringify(request.toolResults[0]?.output)}` }
            : { text: 'never', delayMs: 5_000 },
      { env: { OPENAI_API_KEY: 'sk-test' } },
    );
    const saved = await (await app.request('/api/agents/math', patch({ timeoutSeconds: 0.2 }))).json();
    expect(saved).toMatchObject({ agent: { limits: { timeout: 0.2 } } });
    const chunks = await readChunks(await app.request('/api/chat', postJson(chatBody('t1', 'go'))));
    expect(JSON.stringify(chunks)).toContain('"status":"timeout"');
    const reset = await (await app.request('/api/agents/math', patch({ timeoutSeconds: null }))).json();
    expect(reset.agent.limits.timeout).toBeUndefined();
    expect((await app.request('/api/agents/math', patch({ timeoutSeconds: -1 }))).status).toBe(400);

    const main = await (await app.request('/api/agents/main', patch({ model: 'openai:gpt-5-mini' }))).json();
    expect(main).toMatchObject({
      agent: { model: 'openai:gpt-5-mini', effectiveModel: 'openai:gpt-5-mini' },
    });
  });
});

describe('GET and PATCH /api/settings', () => {
  it('switches the caller to prefetch mode, which then runs the prefetch agent before main answers', async () => {
    const agentsAsked: string[] = [];
    const { app } = await testServer((request: ScriptedRequest) => {
      agentsAsked.push(isMain(request.system) ? 'main' : 'other');
      return { text: 'ok' };
    });
    expect(await (await app.request('/api/settings')).json()).toMatchObject({ delegationMode: 'delegate' });
    const refused = await app.request('/api/settings', patch({ delegationMode: 'prefetch' }));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { message: expect.stringContaining('prefetch') } });
    const changed = await app.request(
      '/api/settings',
      patch({ delegationMode: 'prefetch', prefetch: { agent: 'research', trigger: 'weather' } }),
    );
    expect(await changed.json()).toMatchObject({
      delegationMode: 'prefetch',
      prefetch: { agent: 'research' },
    });
    await readChunks(await app.request('/api/chat', postJson(chatBody('s9', 'The weather in Lyon?'))));
    expect(agentsAsked[0]).toBe('other');
    expect(agentsAsked).toContain('main');
  });

  it('says which model answers, or how to set one (the CLI’s own words)', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    expect(await (await app.request('/api/settings')).json()).toEqual({
      model: 'scripted:test',
      delegationMode: 'delegate',
    });
  });

  it("holds a shared server's users to the operator's config: no re-enabling, no re-pinning, no operator profile", async () => {
    const systems: string[] = [];
    const { app, cadre } = await testServer(
      (request: ScriptedRequest) => {
        systems.push(request.system);
        return { text: 'ok' };
      },
      {
        config: {
          agents: { science: { enabled: false }, research: { model: 'scripted:test' } },
          person: { location: 'Operator Town', profile: 'OPERATOR-PRIVATE-PROFILE' },
        },
        env: { OPENAI_API_KEY: 'sk-test' },
      },
    );
    const { token } = await cadre.users.add('mallory');
    const mallory = { authorization: `Bearer ${token}` };
    const asMallory = (path: string, body: unknown) => {
      const request = patch(body);
      return app.request(path, { ...request, headers: { ...request.headers, ...mallory } });
    };
    const enable = await asMallory('/api/agents/science', { enabled: true });
    expect(enable.status).toBe(403);
    expect(await enable.json()).toMatchObject({ error: { code: 'operator_setting' } });
    expect((await asMallory('/api/agents/research', { model: 'openai:gpt-5' })).status).toBe(403);
    // A setting saved another way (before this rule) does not lift the ceiling either.
    await cadre.store.settings.put(`agent:${(await cadre.users.list())[0]!.id}`, 'science', {
      enabled: true,
    });
    const settings = await cadre.settings.agentSettings((await cadre.users.list())[0]!.id);
    expect(settings.science).toMatchObject({ enabled: false });
    // Switching off is still each user's choice.
    expect((await asMallory('/api/agents/math', { enabled: false })).status).toBe(200);
    await readChunks(await app.request('/api/chat', postJson(chatBody('m1', 'hello'), mallory)));
    expect(systems.join('\n')).not.toContain('OPERATOR-PRIVATE-PROFILE');
  });

  it("holds a shared server's users to the operator's time limits and to delegation turned off", async () => {
    const { app, cadre } = await testServer([{ text: 'ok' }], {
      config: {
        limits: { timeoutSeconds: 4 },
        agents: { math: { timeoutSeconds: 2 } },
        delegation: { mode: 'off' },
      },
    });
    const { token, user } = await cadre.users.add('mallory');
    const mallory = { authorization: `Bearer ${token}` };
    const as = (path: string, body: unknown) => {
      const request = patch(body);
      return app.request(path, { ...request, headers: { ...request.headers, ...mallory } });
    };
    const longer = await as('/api/agents/research', { timeoutSeconds: 86_400 });
    expect(longer.status).toBe(403);
    expect(await longer.json()).toMatchObject({ error: { code: 'operator_setting' } });
    expect((await as('/api/agents/math', { timeoutSeconds: 3 })).status).toBe(403);
    expect((await as('/api/agents/research', { timeoutSeconds: 3 })).status).toBe(200);
    // Saved another way, a longer limit is still cut to the operator's.
    await cadre.store.settings.put(`agent:${user.id}`, 'science', { timeoutSeconds: 86_400 });
    expect((await cadre.settings.agentSettings(user.id)).science).toMatchObject({ timeoutSeconds: 4 });
    const on = await as('/api/settings', { delegationMode: 'delegate' });
    expect(on.status).toBe(403);
    await cadre.store.settings.put(`user:${user.id}`, 'delegation', { mode: 'delegate' });
    expect((await cadre.settings.delegation(user.id)).mode).toBe('off');
    // The operator's own settings are theirs to change.
    expect(
      (await cadre.settings.updateAgent('local', 'research', { timeoutSeconds: 600 })).timeoutSeconds,
    ).toBe(600);
  });

  it("holds a shared server's users to an agent definition's own time limit when the config sets none", async () => {
    const { app, cadre } = await testServer([{ text: 'ok' }]);
    const { token, user } = await cadre.users.add('mallory');
    const request = patch({ timeoutSeconds: 86_400 });
    const longer = await app.request('/api/agents/research', {
      ...request,
      headers: { ...request.headers, authorization: `Bearer ${token}` },
    });
    // research.md says `timeout: 240`.
    expect(longer.status).toBe(403);
    expect(await longer.json()).toMatchObject({
      error: { code: 'operator_setting', message: /at most 240 s/ },
    });
    await cadre.store.settings.put(`agent:${user.id}`, 'research', { timeoutSeconds: 86_400 });
    expect((await cadre.settings.agentSettings(user.id)).research).toMatchObject({ timeoutSeconds: 240 });
    // The operator may still give it longer.
    expect(
      (await cadre.settings.updateAgent('local', 'research', { timeoutSeconds: 600 })).timeoutSeconds,
    ).toBe(600);
  });
});
