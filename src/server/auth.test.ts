import { describe, expect, it } from 'vitest';
import { chatBody, heldGate, postJson, readChunks, testServer } from '../../test/helpers/server.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('auth', () => {
  it('serves the local user without a token while no credentials exist', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const response = await app.request('/api/sessions');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sessions: [] });
  });

  it('requires CADRE_TOKEN as a bearer token on the API, but not for /health or the page', async () => {
    const { app } = await testServer([{ text: 'hi' }], { server: { singleUserToken: 's3cret-token' } });
    const missing = await app.request('/api/sessions');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await missing.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await app.request('/api/sessions', { headers: bearer('wrong') })).status).toBe(401);
    expect((await app.request('/api/sessions', { headers: { authorization: 's3cret-token' } })).status).toBe(
      401,
    );
    expect((await app.request('/api/sessions', { headers: bearer('s3cret-token') })).status).toBe(200);
    expect((await app.request('/api/chat', postJson(chatBody('x', 'hi')))).status).toBe(401);
    expect((await app.request('/health')).status).toBe(200);
    expect((await app.request('/')).status).toBe(200);
  });

  it("gives each user their own sessions: another user's session is never theirs to read, write or delete", async () => {
    const { app, cadre } = await testServer(() => ({ text: 'an answer' }));
    const alice = await cadre.users.add('alice');
    const bob = await cadre.users.add('bob');
    expect(alice.token).toMatch(/^cadre_/);
    // Before any token was used, the server already asks for one: users exist.
    expect((await app.request('/api/sessions')).status).toBe(401);

    await readChunks(
      await app.request('/api/chat', postJson(chatBody('alice-1', 'private question'), bearer(alice.token))),
    );
    const mine = (await (await app.request('/api/sessions', { headers: bearer(alice.token) })).json()) as {
      sessions: Array<{ id: string }>;
    };
    expect(mine.sessions.map((session) => session.id)).toEqual(['alice-1']);

    const theirs = await app.request('/api/sessions', { headers: bearer(bob.token) });
    expect(await theirs.json()).toEqual({ sessions: [] });
    expect((await app.request('/api/sessions/alice-1', { headers: bearer(bob.token) })).status).toBe(404);
    expect(
      (await app.request('/api/sessions/alice-1', { method: 'DELETE', headers: bearer(bob.token) })).status,
    ).toBe(404);
    // Bob cannot write into Alice's session by naming its id either: the id makes a session of his own.
    await readChunks(
      await app.request('/api/chat', postJson(chatBody('alice-1', 'let me in'), bearer(bob.token))),
    );
    const still = (await (
      await app.request('/api/sessions/alice-1', { headers: bearer(alice.token) })
    ).json()) as {
      messages: unknown[];
    };
    expect(still.messages).toHaveLength(2);

    // A removed user's token stops working at once (it had been verified and remembered before).
    expect(await cadre.users.remove('alice')).toBe(true);
    expect((await app.request('/api/sessions', { headers: bearer(alice.token) })).status).toBe(401);
    expect((await app.request('/api/sessions', { headers: bearer(bob.token) })).status).toBe(200);
  });

  it("keeps each user's runs theirs: another's run id is a 404 to read, follow or stop", async () => {
    const { app, cadre } = await testServer(() => ({ text: 'an answer' }));
    const alice = bearer((await cadre.users.add('alice')).token);
    const bob = bearer((await cadre.users.add('bob')).token);
    const chunks = await readChunks(
      await app.request('/api/chat', postJson(chatBody('a-runs', 'question'), alice)),
    );
    const root = chunks.find((chunk) => chunk.type === 'data-run') as { data: { runId: string } };
    const runId = root.data.runId;
    expect((await app.request(`/api/runs/${runId}`, { headers: alice })).status).toBe(200);
    expect((await app.request(`/api/runs/${runId}/events`, { headers: alice })).status).toBe(200);
    expect((await app.request(`/api/runs/${runId}`, { headers: bob })).status).toBe(404);
    expect((await app.request(`/api/runs/${runId}/events`, { headers: bob })).status).toBe(404);
    expect((await app.request(`/api/runs/${runId}/cancel`, { method: 'POST', headers: bob })).status).toBe(
      404,
    );
  });

  it('keeps only a scrypt hash of each token', async () => {
    const { cadre, store } = await testServer([{ text: 'hi' }]);
    const { token } = await cadre.users.add('carol');
    const rows = store.database.prepare('SELECT token_hash FROM users WHERE name = ?').all('carol') as Array<{
      token_hash: string;
    }>;
    expect(rows[0]!.token_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    // cadre_<key: 12 characters>_<secret: 43>; both are base64url, so either may hold a "_" itself.
    const secret = /^cadre_.{12}_(.{43})$/.exec(token)?.[1];
    expect(secret).toBeDefined();
    expect(rows[0]!.token_hash).not.toContain(secret!);
    expect(await cadre.users.verify(`${token}x`)).toBeUndefined();
    expect(
      await cadre.users.verify(token.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'))),
    ).toBeUndefined();
    expect((await cadre.users.verify(token))?.name).toBe('carol');
    await expect(cadre.users.add('carol')).rejects.toMatchObject({ code: 'user_exists' });
    await expect(cadre.users.add('local')).rejects.toMatchObject({ code: 'bad_user_name' });
  });
});

describe('hardening', () => {
  it('refuses a Host that is not this server (DNS rebinding) with 403', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const rebound = await app.request('http://evil.example:4319/api/sessions');
    expect(rebound.status).toBe(403);
    expect(await rebound.json()).toMatchObject({ error: { code: 'forbidden_host' } });
    expect((await app.request('http://127.0.0.1:4319/api/sessions')).status).toBe(200);
    expect((await app.request('http://localhost:4319/health')).status).toBe(200);
    expect((await app.request('http://[::1]:4319/health')).status).toBe(200);
    const proxied = await testServer([{ text: 'hi' }], { server: { allowedHosts: ['cadre.example.org'] } });
    expect((await proxied.app.request('http://cadre.example.org/health')).status).toBe(200);
  });

  it("refuses another site's page (a foreign Origin) and accepts the server's own", async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const foreign = await app.request('http://localhost:4319/api/sessions', {
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: { code: 'forbidden_origin' } });
    const own = await app.request('http://localhost:4319/api/sessions', {
      headers: { origin: 'http://localhost:4319' },
    });
    expect(own.status).toBe(200);
  });

  it('answers a body over the limit with 413, before reading it all', async () => {
    const { app } = await testServer([{ text: 'hi' }], { server: { limits: { maxBodyBytes: 1000 } } });
    const large = await app.request('/api/chat', postJson(chatBody('big', 'x'.repeat(5000))));
    expect(large.status).toBe(413);
    expect(await large.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('limits how many answers one user runs at once (429), and frees the slot when one ends', async () => {
    const { gate, release } = heldGate();
    const { app } = await testServer(
      async () => {
        await gate;
        return { text: 'done' };
      },
      { server: { limits: { maxConcurrentChats: 1 } } },
    );
    const first = await app.request('/api/chat', postJson(chatBody('c1', 'one')));
    expect(first.status).toBe(200);
    const second = await app.request('/api/chat', postJson(chatBody('c2', 'two')));
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: { code: 'too_many_chats' } });
    release();
    await readChunks(first);
    const third = await app.request('/api/chat', postJson(chatBody('c3', 'three')));
    expect(third.status).toBe(200);
    await readChunks(third);
  });

  it('answers an unexpected failure with a generic 500: no stack trace, no internals', async () => {
    const lines: string[] = [];
    const { app, cadre } = await testServer([{ text: 'hi' }], {
      server: { log: (line) => lines.push(line) },
    });
    cadre.sessions.list = () => {
      throw new TypeError('secret internal detail at /srv/cadre/src/x.ts:12');
    };
    const response = await app.request('/api/sessions');
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('secret internal detail');
    expect(text).not.toMatch(/\.ts:\d+/);
    expect(lines.join('\n')).toContain('secret internal detail');
  });

  it('never logs a token or a query string', async () => {
    const lines: string[] = [];
    const { app } = await testServer([{ text: 'hi' }], {
      server: { singleUserToken: 'tok-very-secret', log: (line) => lines.push(line) },
    });
    await app.request('/api/sessions?token=tok-very-secret', { headers: bearer('tok-very-secret') });
    await app.request('/api/sessions', { headers: bearer('tok-wrong-guess') });
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toContain('tok-');
    expect(lines[0]).toMatch(/^GET \/api\/sessions 200 \d+ms$/);
  });

  it('never lets a request path forge a log line or reach the terminal as an escape', async () => {
    const lines: string[] = [];
    const { app } = await testServer([{ text: 'hi' }], { server: { log: (line) => lines.push(line) } });
    await app.request('/x%0a2026-01-01T00:00:00.000Z%20GET%20/admin%20200%201ms');
    await app.request('/x%1b]0;owned%07%1b[2J%0d');
    await app.request('/x\u2028y%E2%80%AEz');
    expect(lines).toHaveLength(3);
    const controls = (line: string) =>
      [...line].filter((char) => char < ' ' || char === '\u2028' || char === '\u202e');
    for (const line of lines) expect(controls(line)).toEqual([]);
    expect(lines[0]).toMatch(/^GET \/x\\x0a2026-01-01T00:00:00.000Z GET \/admin 200 1ms \d{3} \d+ms$/);
    expect(lines[2]).toContain('\\u2028y\\u202ez');
    expect(lines[1]).toContain('\\x1b]0;owned\\x07\\x1b[2J\\x0d');
  });
});
