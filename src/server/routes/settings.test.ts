import { describe, expect, it } from 'vitest';
import {
  chatBody,
  isMain,
  postJson,
  readChunks,
  readMessage,
  testServer,
} from '../../../test/helpers/server.ts';

const patch = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'PATCH',
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers },
});

describe('the delegation mode setting', () => {
  it('turns delegation off (main is offered no sub-agent) and back on, for the caller only', async () => {
    const { app, model, cadre } = await testServer((request) =>
      isMain(request.system) && request.prompt.at(-1)?.role === 'user' && request.toolNames.includes('math')
        ? { toolCalls: [{ name: 'math', input: { task: 'Compute 2 + 2.' } }] }
        : { text: 'An answer.' },
    );
    const alice = { authorization: `Bearer ${(await cadre.users.add('alice')).token}` };
    const bob = { authorization: `Bearer ${(await cadre.users.add('bob')).token}` };
    const mainTools = () => model.calls.filter((call) => isMain(call.system)).at(-1)!.toolNames;
    const ask = async (session: string, headers: Record<string, string>) =>
      readMessage(
        await readChunks(
          await app.request('/api/chat', postJson(chatBody(session, 'What is 2 + 2?'), headers)),
        ),
      );

    const delegated = await ask('a1', alice);
    expect(delegated.metadata).toMatchObject({ delegationUsed: true });

    const off = await app.request('/api/settings', patch({ delegationMode: 'off' }, alice));
    expect(await off.json()).toMatchObject({ delegationMode: 'off' });
    const alone = await ask('a1', alice);
    expect(mainTools()).not.toContain('math');
    expect(mainTools()).not.toContain('research');
    // Nor is main told anything about sub-agents (seed 000: a feature's instructions only when it is on).
    const mainSystem = () => model.calls.filter((call) => isMain(call.system)).at(-1)!.system;
    expect(mainSystem()).not.toMatch(/sub-agent|delegat/i);
    expect(alone.metadata).toMatchObject({ delegationUsed: false });
    expect(alone.parts.filter((part) => part.type === 'data-run')).toHaveLength(1);

    // Bob's main agent still delegates.
    expect(await (await app.request('/api/settings', { headers: bob })).json()).toMatchObject({
      delegationMode: 'delegate',
    });
    await ask('b1', bob);
    expect(mainTools()).toContain('math');
    expect(mainSystem()).toContain('## When to delegate');
    expect(mainSystem()).toContain("A sub-agent's result has a status.");

    await app.request('/api/settings', patch({ delegationMode: 'delegate' }, alice));
    await ask('a1', alice);
    expect(mainTools()).toContain('math');
  });
});
