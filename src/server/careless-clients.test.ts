import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../../test/helpers/cli.ts';
import {
  chatBody,
  heldGate,
  jsonRequest,
  mathDelegation,
  readChunks,
  testServer,
} from '../../test/helpers/server.ts';
import { markInterruptedRuns } from '../store/sqlite/run-maintenance.ts';

/** What a careless or hostile client sends the HTTP door, and what it must get back: a clear 4xx or the work done once. */

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Asks the delegation question in `sessionId`, then makes its tree look as if the process had died after
 * math's first step (as resume.test.ts does); returns the root run.
 */
async function interruptedTree(
  { app, store, cadre }: Pick<Awaited<ReturnType<typeof testServer>>, 'app' | 'store' | 'cadre'>,
  sessionId: string,
): Promise<{ id: string }> {
  await readChunks(
    await app.request('/api/chat', jsonRequest('POST', chatBody(sessionId, 'What is 17 times 23?'))),
  );
  await cadre.store.runs.flush();
  const db = store.database;
  const root = db.prepare('SELECT id FROM runs WHERE parent_id IS NULL').get() as { id: string };
  db.prepare('DELETE FROM journal WHERE position > ?').run(3);
  db.prepare("DELETE FROM events WHERE type = 'run-finish'").run();
  db.prepare("UPDATE runs SET status = 'running', owner_pid = 999999999").run();
  await markInterruptedRuns(db, { isAlive: () => false });
  return root;
}

describe('a chat message id the client chose', () => {
  it('sent again (a retry, useChat regenerate) or already used by another user is answered, never a 500', async () => {
    const { app, cadre } = await testServer(() => ({ text: 'an answer' }));
    const aliceUser = await cadre.users.add('alice');
    const bobUser = await cadre.users.add('bob');
    const alice = bearer(aliceUser.token);
    const bob = bearer(bobUser.token);
    const first = await app.request(
      '/api/chat',
      jsonRequest('POST', chatBody('a1', 'question', 'm-1'), alice),
    );
    expect(first.status).toBe(200);
    await readChunks(first);

    const again = await app.request(
      '/api/chat',
      jsonRequest('POST', chatBody('a1', 'question', 'm-1'), alice),
    );
    expect(again.status).toBe(200);
    await readChunks(again);
    // Bob picks the same id in his own session: his message is stored, Alice's is untouched.
    const theirs = await app.request('/api/chat', jsonRequest('POST', chatBody('b1', 'mine', 'm-1'), bob));
    expect(theirs.status).toBe(200);
    await readChunks(theirs);

    // Sent again in its own session, it replaces its first answer (see chat-resend.test.ts).
    const session = (await cadre.sessions.get(aliceUser.user.id, 'a1')).messages;
    expect(session.map((message) => `${message.role}:${message.content}`)).toEqual([
      'user:question',
      'assistant:an answer',
    ]);
    expect(session[0]!.id).toBe('m-1');
    const bobs = (await cadre.sessions.get(bobUser.user.id, 'b1')).messages;
    expect(bobs.map((message) => `${message.role}:${message.content}`)).toEqual([
      'user:mine',
      'assistant:an answer',
    ]);
  });
});

/** Turns prefetch mode on with this agent and trigger, as the web app's settings panel does. */
function setPrefetch(app: Awaited<ReturnType<typeof testServer>>['app'], agent: string, trigger: string) {
  return app.request(
    '/api/settings',
    jsonRequest('PATCH', { delegationMode: 'prefetch', prefetch: { agent, trigger } }),
  );
}

describe('the prefetch setting', () => {
  it('matches its trigger in time linear in the question: (a+)+$ cannot freeze the server', async () => {
    const { app } = await testServer(() => ({ text: 'an answer' }));
    const set = await setPrefetch(app, 'math', '^(a+)+$');
    expect(set.status).toBe(200);
    const started = performance.now();
    // A backtracking engine takes about 2^32 steps on this question (tens of seconds, all users blocked).
    const answer = await app.request('/api/chat', jsonRequest('POST', chatBody('p1', `${'a'.repeat(32)}!`)));
    expect(answer.status).toBe(200);
    await readChunks(answer);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('refuses a trigger it cannot run and an agent that does not exist, naming the field (400)', async () => {
    const { app } = await testServer(() => ({ text: 'an answer' }));
    const lookahead = await setPrefetch(app, 'math', '(?=x)');
    expect(lookahead.status).toBe(400);
    expect(((await lookahead.json()) as { error: { message: string } }).error.message).toContain(
      'prefetch.trigger',
    );
    const unknown = await setPrefetch(app, 'nope', 'x');
    expect(unknown.status).toBe(400);
    const body = (await unknown.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_settings');
    expect(body.error.message).toContain('prefetch.agent');
    expect(body.error.message).toContain('"nope"');
    // Nothing was saved by the refused requests.
    expect(await (await app.request('/api/settings')).json()).toMatchObject({ delegationMode: 'delegate' });
  });
});

describe('one session, two requests at once', () => {
  it('two first messages to a new session: one is answered there, the other refused while it runs (neither is "already exists")', async () => {
    const { gate, release } = heldGate();
    const { app, cadre } = await testServer(async () => {
      await gate;
      return { text: 'an answer' };
    });
    const [one, two] = await Promise.all([
      app.request('/api/chat', jsonRequest('POST', chatBody('n1', 'first'))),
      app.request('/api/chat', jsonRequest('POST', chatBody('n1', 'second'))),
    ]);
    release();
    expect([one.status, two.status]).toEqual([200, 409]);
    expect(((await two.json()) as { error: { code: string } }).error.code).toBe('answer_running');
    await readChunks(one);
    const session = await cadre.sessions.get('local', 'n1');
    // One question and its answer, never two questions and then two answers.
    expect(session.messages.map((message) => `${message.role}:${message.content}`)).toEqual([
      'user:first',
      'assistant:an answer',
    ]);
  });

  it('two resumes of one interrupted tree at once start one attempt; the other is a 409', async () => {
    const { app, model, store, cadre } = await testServer(mathDelegation);
    const root = await interruptedTree({ app, store, cadre }, 'r1');
    const before = model.calls.length;

    const answers = await Promise.all([
      app.request(`/api/runs/${root.id}/resume`, { method: 'POST' }),
      app.request(`/api/runs/${root.id}/resume`, { method: 'POST' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    const refused = answers.find((answer) => answer.status === 409)!;
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('not_interrupted');
    const { runId } = (await answers.find((answer) => answer.status === 202)!.json()) as { runId: string };
    // The resumed tree's end, as this process's live trees say it (no polling).
    await cadre.live.get('local', runId)?.done;
    await cadre.store.runs.flush();
    const session = await cadre.sessions.get('local', 'r1');
    // The first answer, then the one resumed attempt's: not two.
    expect(session.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(model.calls.length - before).toBeLessThanOrEqual(2);
  });
});

describe('the limit on answers running at once', () => {
  it('holds when the requests come at once: of three parallel chats over a limit of one, two are 429', async () => {
    const { gate, release } = heldGate();
    const { app } = await testServer(
      async () => {
        await gate;
        return { text: 'an answer' };
      },
      { server: { limits: { maxConcurrentChats: 1 } } },
    );
    const answers = await Promise.all(
      ['c1', 'c2', 'c3'].map((id) => app.request('/api/chat', jsonRequest('POST', chatBody(id, 'question')))),
    );
    release();
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 429, 429]);
    await Promise.all(answers.filter((answer) => answer.status === 200).map(readChunks));
  });

  it('counts a resumed tree too: over the limit, POST /api/runs/:id/resume is a 429 like a chat', async () => {
    const { gate, release } = heldGate();
    const { app, store, cadre } = await testServer(
      async (request) => {
        if (request.prompt.some((message) => JSON.stringify(message.content).includes('slow question'))) {
          await gate;
          return { text: 'a slow answer' };
        }
        return mathDelegation(request);
      },
      { server: { limits: { maxConcurrentChats: 1 } } },
    );
    const root = await interruptedTree({ app, store, cadre }, 'l1');

    const running = await app.request('/api/chat', jsonRequest('POST', chatBody('l2', 'slow question')));
    expect(running.status).toBe(200);
    const refused = await app.request(`/api/runs/${root.id}/resume`, { method: 'POST' });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('too_many_chats');
    release();
    await readChunks(running);
    // Every tree of this process has ended and freed its slot (no polling).
    await Promise.all(cadre.live.all().map((tree) => tree.done));
    expect(cadre.live.countFor('local')).toBe(0);
    // The refusal claimed nothing: with the slot free, the same run resumes.
    expect((await app.request(`/api/runs/${root.id}/resume`, { method: 'POST' })).status).toBe(202);
  });
});

describe('routes that do not exist', () => {
  it('under /v1 are a JSON 404, like /api, never the web app page', async () => {
    const root = tempHome();
    mkdirSync(join(root, 'assets'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>Cadre</title>');
    const { app } = await testServer([{ text: 'hi' }], { server: { webRoot: root } });
    for (const [method, path] of [
      ['POST', '/v1/embeddings'],
      ['GET', '/v1/chat/completions'],
      ['GET', '/v1'],
    ] as const) {
      const response = await app.request(path, { method });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
    }
    expect((await app.request('/v1/models')).status).toBe(200);
  });

  it('under /.well-known are a JSON 404: an MCP client looking for OAuth metadata learns there is none', async () => {
    const root = tempHome();
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>Cadre</title>');
    const { app } = await testServer([{ text: 'hi' }], { server: { webRoot: root } });
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
    }
    expect(await (await app.request('/sessions/some-page')).text()).toContain('<title>Cadre</title>');
  });
});

describe('following a live run', () => {
  it('opens the event stream at once, and never sends an event at or before the cursor', async () => {
    const { gate, release } = heldGate();
    const { app } = await testServer(async () => {
      await gate;
      return { text: 'done' };
    });
    const chat = await app.request('/api/chat', jsonRequest('POST', chatBody('f1', 'one')));
    const reader = chat.body!.getReader();
    let seen = '';
    while (!seen.includes('"data-run"')) seen += new TextDecoder().decode((await reader.read()).value);
    const runId = /"runId":"(run_[^"]+)"/.exec(seen)![1]!;

    // The model is still thinking: nothing new to send, but the stream is open (EventSource's onopen).
    const waiting = Symbol('waiting');
    const opened = await Promise.race([
      app.request(`/api/runs/${runId}/events?after=0`),
      new Promise<typeof waiting>((resolve) => setTimeout(() => resolve(waiting), 1000)),
    ]);
    expect(opened).not.toBe(waiting);
    expect((opened as Response).status).toBe(200);
    // A cursor beyond the tree (another tree's, or made up) is past every event of this one.
    const beyond = app.request(`/api/runs/${runId}/events?after=999999`);
    const unknown = await app.request('/api/runs/run_nope/events');
    expect(unknown.status).toBe(404);

    release();
    while (!(await reader.read()).done) {}
    const ids = [...(await (opened as Response).text()).matchAll(/^id: (\d+)$/gm)].map((match) =>
      Number(match[1]),
    );
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => id > 0)).toBe(true);
    expect(await (await beyond).text()).toBe('');
  });
});

describe('unicode in what names a session', () => {
  it('a title cut at 80 characters never splits an emoji into a broken character', async () => {
    const { app } = await testServer(() => ({ text: 'an answer' }));
    const question = `${'a'.repeat(79)}😀 and more`;
    await readChunks(await app.request('/api/chat', jsonRequest('POST', chatBody('u1', question))));
    const { sessions } = (await (await app.request('/api/sessions')).json()) as {
      sessions: Array<{ id: string; title: string }>;
    };
    const title = sessions.find((session) => session.id === 'u1')!.title;
    expect(title).not.toContain('\uFFFD');
    expect(question.startsWith(title)).toBe(true);
    expect(title.length).toBeGreaterThanOrEqual(79);
  });
});

describe('a bug after the answer started streaming', () => {
  it('tells the client to see the server log, and the log has it', async () => {
    const lines: string[] = [];
    const { app, cadre } = await testServer(() => ({ text: 'an answer' }), {
      server: { log: (line) => lines.push(line) },
    });
    // Storing the answer meets a bug.
    cadre.store.sessions.appendReply = async () => {
      throw new TypeError('secret detail at /srv/cadre/x.ts:12');
    };
    const response = await app.request('/api/chat', jsonRequest('POST', chatBody('e1', 'question')));
    expect(response.status).toBe(200);
    const chunks = await readChunks(response);
    const error = chunks.find((chunk) => chunk.type === 'error') as { errorText: string };
    expect(error.errorText).toContain('see its log');
    expect(error.errorText).not.toContain('secret detail');
    expect(lines.join('\n')).toContain('error in POST /api/chat: TypeError: secret detail');
  });
});

describe('a chat body nested absurdly deep', () => {
  it('is a 400 naming the limit, not a 500 from a stack overflow, and leaves no empty session', async () => {
    const lines: string[] = [];
    const { app } = await testServer(() => ({ text: 'an answer' }), {
      server: { log: (line) => lines.push(line), limits: { maxJsonDepth: 100 } },
    });
    // 400 KB: well under the body limit, but JSON.stringify cannot store it.
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const body = `{"id":"deep","messages":[{"role":"user","parts":[{"type":"text","text":"hi","extra":${deep}}]}]}`;
    const response = await app.request('/api/chat', jsonRequest('POST', body));
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain('100 levels');
    expect(lines.filter((line) => line.startsWith('error in'))).toEqual([]);
    expect((await app.request('/api/sessions/deep')).status).toBe(404);
    // Up to the limit is fine.
    const nested = `${'['.repeat(90)}${']'.repeat(90)}`;
    const fine = `{"id":"ok","messages":[{"role":"user","parts":[{"type":"text","text":"hi","extra":${nested}}]}]}`;
    const answered = await app.request('/api/chat', jsonRequest('POST', fine));
    expect(answered.status).toBe(200);
    await readChunks(answered);
  });
});

describe('deleting a session while its answer runs', () => {
  it('stops the answer: the run ends cancelled, and the stream ends without an error', async () => {
    const { app, cadre } = await testServer(() => ({ text: 'too late', delayMs: 60_000 }));
    const chat = await app.request('/api/chat', jsonRequest('POST', chatBody('d1', 'a long question')));
    const reader = chat.body!.getReader();
    let seen = '';
    while (!seen.includes('"data-run"')) seen += new TextDecoder().decode((await reader.read()).value);
    const runId = /"runId":"(run_[^"]+)"/.exec(seen)![1]!;

    expect((await app.request('/api/sessions/d1', { method: 'DELETE' })).status).toBe(200);
    const started = performance.now();
    for (let part = await reader.read(); !part.done; part = await reader.read())
      seen += new TextDecoder().decode(part.value);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(seen).not.toContain('"type":"error"');
    await cadre.store.runs.flush();
    const run = await app.request(`/api/runs/${runId}`);
    expect(await run.json()).toMatchObject({ status: 'cancelled' });
    expect((await app.request('/api/sessions/d1')).status).toBe(404);
  });
});
