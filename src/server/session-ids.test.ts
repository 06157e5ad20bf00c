import { describe, expect, it } from 'vitest';
import { chatBody, heldGate, postJson, readChunks, testServer } from '../../test/helpers/server.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** What a response says, with the id it was asked about written as `<id>`: the same for two ids or not. */
async function answer(response: Response, id: string) {
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: text.replaceAll(id, '<id>'),
  };
}

/** The text of a chat stream's answer. */
function answerText(body: string): string {
  return [...body.matchAll(/"delta":"([^"]*)"/g)].map((match) => match[1]).join('');
}

/** A stored message's text, as the page shows it. */
const textOf = (message: { parts: Array<{ type: string; text?: string }> }) =>
  message.parts.find((part) => part.type === 'text')?.text;

/**
 * Issue 23, item 16: a session id someone else uses must answer exactly as an id nobody uses, on every
 * route that takes one, including while its owner's answer is being written there.
 */
describe("another user's session id, to a stranger", () => {
  it('answers every session route as an unused id does, and the stranger gets a session of their own', async () => {
    const { gate, release } = heldGate();
    const { app, cadre } = await testServer(async (request) => {
      const asked = JSON.stringify(request.prompt);
      if (asked.includes('alice, held')) await gate;
      return { text: asked.includes('bob') ? 'answer for bob' : 'answer for alice' };
    });
    const alice = bearer((await cadre.users.add('alice')).token);
    const bob = bearer((await cadre.users.add('bob')).token);
    const theirs = 'chat-shared-1';
    const unused = 'chat-unused-1';

    await readChunks(await app.request('/api/chat', postJson(chatBody(theirs, 'alice, first'), alice)));
    // Alice's second answer is being written while bob tries her id.
    const running = await app.request('/api/chat', postJson(chatBody(theirs, 'alice, held'), alice));
    expect(running.status).toBe(200);
    const attached = await app.request(`/api/chat/${theirs}/stream`, { headers: alice });
    expect(attached.status).toBe(200);
    await attached.body?.cancel();

    const probes: Array<[string, (id: string) => Promise<Response>]> = [
      ['GET /api/sessions/:id', async (id) => app.request(`/api/sessions/${id}`, { headers: bob })],
      ['GET /api/chat/:id/stream', async (id) => app.request(`/api/chat/${id}/stream`, { headers: bob })],
      [
        'PATCH /api/sessions/:id',
        async (id) =>
          app.request(`/api/sessions/${id}`, {
            method: 'PATCH',
            headers: { ...bob, 'content-type': 'application/json' },
            body: JSON.stringify({ title: 'Mine now' }),
          }),
      ],
      [
        'GET /api/sessions/:id/export (md)',
        async (id) => app.request(`/api/sessions/${id}/export?format=md`, { headers: bob }),
      ],
      [
        'GET /api/sessions/:id/export (json)',
        async (id) => app.request(`/api/sessions/${id}/export?format=json`, { headers: bob }),
      ],
      [
        'DELETE /api/sessions/:id',
        async (id) => app.request(`/api/sessions/${id}`, { method: 'DELETE', headers: bob }),
      ],
      ['GET /api/sessions', async () => app.request('/api/sessions', { headers: bob })],
    ];
    for (const [route, probe] of probes) {
      const forTheirs = await answer(await probe(theirs), theirs);
      const forUnused = await answer(await probe(unused), unused);
      expect(forTheirs, route).toEqual(forUnused);
    }
    expect(
      await answer(await app.request(`/api/sessions/${theirs}`, { headers: bob }), theirs),
    ).toMatchObject({ status: 404, body: expect.stringContaining('"code":"unknown_session"') });

    // Posting to the id starts bob's own session, as an unused id does: no 404, no "answer running".
    const chats = [];
    for (const id of [theirs, unused]) {
      const response = await app.request('/api/chat', postJson(chatBody(id, 'bob asks'), bob));
      const seen = await answer(response, id);
      expect(answerText(seen.body)).toBe('answer for bob');
      chats.push({ status: seen.status, type: seen.type });
    }
    expect(chats[0]).toEqual(chats[1]);
    expect(chats[0]?.status).toBe(200);
    const bobs = (await (await app.request(`/api/sessions/${theirs}`, { headers: bob })).json()) as {
      messages: Array<{ parts: Array<{ type: string; text?: string }> }>;
    };
    expect(bobs.messages.map((message) => textOf(message))).toEqual(['bob asks', 'answer for bob']);
    const listed = (await (await app.request('/api/sessions', { headers: bob })).json()) as {
      sessions: Array<{ id: string }>;
    };
    expect(listed.sessions.map((session) => session.id).sort()).toEqual([theirs, unused].sort());

    // Bob deleting his session of that id leaves alice's whole, her answer still running in it.
    expect((await app.request(`/api/sessions/${theirs}`, { method: 'DELETE', headers: bob })).status).toBe(
      200,
    );
    const stillRunning = await app.request(`/api/chat/${theirs}/stream`, { headers: alice });
    expect(stillRunning.status).toBe(200);
    release();
    expect(answerText(await stillRunning.text())).toBe('answer for alice');
    await readChunks(running);
    const hers = (await (await app.request(`/api/sessions/${theirs}`, { headers: alice })).json()) as {
      messages: Array<{ parts: Array<{ type: string; text?: string }> }>;
    };
    expect(hers.messages.map((message) => textOf(message))).toEqual([
      'alice, first',
      'answer for alice',
      'alice, held',
      'answer for alice',
    ]);
    await cadre.close();
  });
});
