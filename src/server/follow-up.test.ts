import { describe, expect, it } from 'vitest';
import { chatBody, isMain, isMath, postJson, readChunks, testServer } from '../../test/helpers/server.ts';
import type { ScriptedRequest } from '../models/scripted-model.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const said = (request: ScriptedRequest) => JSON.stringify(request.prompt);

interface StoredUIMessage {
  role: string;
  metadata?: unknown;
  parts: Array<{ type: string; text?: string; data?: { runId: string; agent: string } }>;
}
const textOf = (message: StoredUIMessage) =>
  message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

/**
 * Main delegates 17 * 23 to math; math answers a follow-up ("Now double it.") from its own conversation;
 * asked "What did math say last?", main answers with what its history shows of the follow-up; asked to
 * go on with a run id it is given, main calls continue_agent with it.
 */
function script(request: ScriptedRequest) {
  const fromTool = request.prompt.at(-1)?.role === 'tool';
  if (isMain(request.system)) {
    const given = said(request).match(/Continue (run_\w+)/)?.[1];
    if (given && !fromTool)
      return { toolCalls: [{ name: 'continue_agent', input: { run_id: given, message: 'Now double it.' } }] };
    if (fromTool) return { text: `main read: ${JSON.stringify(request.toolResults[0]?.output)}` };
    if (said(request).includes('What did math say last?'))
      return {
        text: said(request).includes('[The sub-agent math answered the person') ? 'math said 782' : 'no idea',
      };
    return { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] };
  }
  if (isMath(request.system)) {
    if (said(request).includes('Now double it.'))
      return { text: said(request).includes('17 * 23 = 391') ? 'Doubled: 782' : 'Double what?' };
    return { text: '17 * 23 = 391' };
  }
  return { text: 'unexpected agent' };
}

describe('POST /api/runs/:id/messages on a finished run', () => {
  it("follows up a finished sub-agent as a new turn of its session, never another user's run", async () => {
    const { app, cadre } = await testServer(script);
    const alice = bearer((await cadre.users.add('alice')).token);
    const bob = bearer((await cadre.users.add('bob')).token);
    await readChunks(await app.request('/api/chat', postJson(chatBody('chat-a', 'What is 17 * 23?'), alice)));
    const sessionOf = async () => {
      const response = await app.request('/api/sessions/chat-a', { headers: alice });
      return ((await response.json()) as { messages: StoredUIMessage[] }).messages;
    };
    const runs = (await sessionOf()).flatMap((message) =>
      message.parts.filter((part) => part.type === 'data-run'),
    );
    const rootId = runs.find((part) => part.data?.agent === 'main')!.data!.runId;
    const mathId = runs.find((part) => part.data?.agent === 'math')!.data!.runId;
    const followUp = (text: string, id = mathId, headers = alice) =>
      app.request(`/api/runs/${id}/messages`, postJson({ text }, headers));

    // Another user's run is no run at all, through the door and through the main agent's continue_agent.
    expect((await followUp('Now double it.', mathId, bob)).status).toBe(404);
    const bobs = await readChunks(
      await app.request('/api/chat', postJson(chatBody('chat-b', `Continue ${mathId}`), bob)),
    );
    expect(JSON.stringify(bobs)).toContain(`there is no finished sub-agent run \\\\\\"${mathId}\\\\\\"`);
    expect(JSON.stringify(bobs)).not.toContain('Doubled');
    // A tree's root is followed up in its chat.
    const atRoot = await followUp('More?', rootId);
    expect(atRoot.status).toBe(409);
    expect(JSON.stringify(await atRoot.json())).toContain('run_not_running');

    const sent = await followUp('Now double it.');
    expect(sent.status).toBe(202);
    const started = (await sent.json()) as { runId: string; continues: string; sessionId: string };
    expect(started).toMatchObject({ continues: mathId, sessionId: 'chat-a' });
    // The session answers it live, as any running answer: the chat's stream attaches to it.
    const live = await readChunks(await app.request('/api/chat/chat-a/stream', { headers: alice }));
    expect(JSON.stringify(live)).toContain('Doubled: 782');
    const continued = (await (
      await app.request(`/api/runs/${started.runId}`, { headers: alice })
    ).json()) as {
      agent: string;
      status: string;
      summary: string;
      continues?: string;
      parentId: string | null;
    };
    expect(continued).toMatchObject({
      agent: 'math',
      status: 'ok',
      summary: 'Doubled: 782',
      continues: mathId,
    });
    const after = await sessionOf();
    expect(after.map((message) => [message.role, textOf(message)])).toEqual([
      ['user', 'What is 17 * 23?'],
      ['assistant', textOf(after[1]!)],
      ['user', 'Now double it.'],
      ['assistant', 'Doubled: 782'],
    ]);
    expect(after[2]?.metadata).toMatchObject({ followUp: { runId: mathId, agent: 'math' } });
    // The main agent reads the follow-up in its history as math's exchange with the person.
    await readChunks(
      await app.request('/api/chat', postJson(chatBody('chat-a', 'What did math say last?'), alice)),
    );
    expect(textOf((await sessionOf()).at(-1)!)).toBe('math said 782');
    // A follow-up is itself finished and kept: it can be followed up again.
    const again = await followUp('Now double it.', started.runId);
    expect(again.status).toBe(202);
    await readChunks(await app.request('/api/chat/chat-a/stream', { headers: alice }));
  });

  it('refuses (409 conversation_not_kept) a run whose conversation was larger than limits.maxStoredOutputChars', async () => {
    const { app } = await testServer(script, { config: { limits: { maxStoredOutputChars: 100 } } });
    await readChunks(await app.request('/api/chat', postJson(chatBody('chat-c', 'What is 17 * 23?'))));
    const session = (await (await app.request('/api/sessions/chat-c')).json()) as {
      messages: StoredUIMessage[];
    };
    const mathId = session.messages
      .flatMap((message) => message.parts)
      .find((part) => part.type === 'data-run' && part.data?.agent === 'math')!.data!.runId;
    const refused = await app.request(`/api/runs/${mathId}/messages`, postJson({ text: 'Now double it.' }));
    expect(refused.status).toBe(409);
    const body = JSON.stringify(await refused.json());
    expect(body).toContain('conversation_not_kept');
    expect(body).toContain('limits.maxStoredOutputChars');
  });
});
