import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testServer } from '../../test/helpers/server.ts';
import { type RunningServer, startServer } from './serve.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const running: RunningServer[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

describe('auth that cannot fail open', () => {
  it('keeps asking for a token on every interface after the last user is removed (no fall-back to local)', async () => {
    const { cadre } = await testServer([{ text: 'acting as local on your keys' }]);
    await cadre.users.add('alice');
    const server = await startServer({ cadre, host: '0.0.0.0', port: 0 });
    running.push(server);
    const url = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${url}/api/sessions`)).status).toBe(401);
    expect(await cadre.users.remove('alice')).toBe(true);
    const after = await fetch(`${url}/api/sessions`, { headers: { host: 'anything.example' } });
    expect(after.status).toBe(401);
    const chat = await fetch(`${url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 's',
        messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      }),
    });
    expect(chat.status).toBe(401);
  });

  it('refuses a server that started without credentials once users appear (503), instead of serving them as local', async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }]);
    expect((await app.request('/api/sessions')).status).toBe(200);
    const { token } = await cadre.users.add('mallory');
    const refused = await app.request('/api/sessions');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: 'restart_needed' } });
    expect((await app.request('/api/sessions', { headers: bearer(token) })).status).toBe(503);
  });

  it('never listens beyond loopback without credentials', async () => {
    const { cadre } = await testServer([{ text: 'hi' }]);
    await expect(startServer({ cadre, host: '0.0.0.0', port: 0 })).rejects.toMatchObject({
      code: 'needs_token',
    });
  });
});

describe('guessing tokens', () => {
  it('takes as long for an unknown token id as for a known id with a wrong secret', async () => {
    const { cadre } = await testServer([{ text: 'hi' }]);
    const { token } = await cadre.users.add('alice');
    const wrongSecret = token.replace(/_[^_]+$/, `_${'A'.repeat(43)}`);
    const unknownId = `cadre_${'Z'.repeat(12)}_${'A'.repeat(43)}`;
    const fastest = async (candidate: string) => {
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        expect(await cadre.users.verify(candidate)).toBeUndefined();
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const known = await fastest(wrongSecret);
    const unknown = await fastest(unknownId);
    // Both pay for one scrypt; before, an unknown id answered in well under a millisecond.
    expect(unknown).toBeGreaterThan(known * 0.3);
  });

  const randomToken = (n: number) => `cadre_${String(n).padStart(12, 'Q')}_${'x'.repeat(43)}`;
  const from = (address: string) => ({ incoming: { socket: { remoteAddress: address } } });

  it('answers an address that keeps sending wrong tokens with 429 and Retry-After, without checking them', async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }], {
      server: { limits: { maxFailedAuthPerMinute: 3 } },
    });
    await cadre.users.add('alice');
    for (let i = 0; i < 3; i++) {
      expect((await app.request('/api/sessions', { headers: bearer(randomToken(i)) })).status).toBe(401);
    }
    for (const wrong of ['wrong', randomToken(99)]) {
      const limited = await app.request('/api/sessions', { headers: bearer(wrong) });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited.json()).toMatchObject({ error: { code: 'too_many_failed_logins' } });
    }
  });

  it("never locks out the valid users who share a flooder's address (a NAT, a proxy)", async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }], {
      server: { limits: { maxFailedAuthPerMinute: 3 } },
    });
    const alice = await cadre.users.add('alice');
    const bob = await cadre.users.add('bob');
    expect((await app.request('/api/sessions', { headers: bearer(alice.token) })).status).toBe(200);
    for (let i = 0; i < 25; i++) await app.request('/api/sessions', { headers: bearer(randomToken(i)) });
    expect((await app.request('/api/sessions', { headers: bearer(randomToken(50)) })).status).toBe(429);
    // One seen before, one never seen by this server: both still get in from the same address.
    expect((await app.request('/api/sessions', { headers: bearer(alice.token) })).status).toBe(200);
    expect((await app.request('/api/sessions', { headers: bearer(bob.token) })).status).toBe(200);
  });

  it("limits guesses at one user's secret from any address, and keeps that user's known token working", async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }], {
      server: { limits: { maxFailedAuthPerMinute: 3 } },
    });
    const alice = await cadre.users.add('alice');
    const bob = await cadre.users.add('bob');
    expect((await app.request('/api/sessions', { headers: bearer(alice.token) })).status).toBe(200);
    const guess = (n: number) => alice.token.replace(/.{43}$/, String(n).padStart(43, 'G'));
    for (let i = 0; i < 3; i++) {
      const answer = await app.request('/api/sessions', { headers: bearer(guess(i)) }, from(`10.0.0.${i}`));
      expect(answer.status).toBe(401);
    }
    expect((await app.request('/api/sessions', { headers: bearer(guess(9)) }, from('10.0.0.9'))).status).toBe(
      429,
    );
    expect(
      (await app.request('/api/sessions', { headers: bearer(alice.token) }, from('10.0.0.9'))).status,
    ).toBe(200);
    expect(
      (await app.request('/api/sessions', { headers: bearer(bob.token) }, from('10.0.0.9'))).status,
    ).toBe(200);
  });

  it('takes the client address from X-Forwarded-For only from a proxy the operator trusts', async () => {
    const flood = async (app: Awaited<ReturnType<typeof testServer>>['app']) => {
      // Each wrong token claims another forwarded address; the peer is always 10.1.1.1.
      for (let i = 0; i < 5; i++) {
        await app.request(
          '/api/sessions',
          { headers: { ...bearer('wrong'), 'x-forwarded-for': `192.0.2.${i}` } },
          from('10.1.1.1'),
        );
      }
      return (
        await app.request(
          '/api/sessions',
          { headers: { ...bearer('wrong'), 'x-forwarded-for': '192.0.2.200' } },
          from('10.1.1.1'),
        )
      ).status;
    };
    const untrusted = await testServer([{ text: 'hi' }], {
      server: { limits: { maxFailedAuthPerMinute: 3 } },
    });
    await untrusted.cadre.users.add('alice');
    expect(await flood(untrusted.app)).toBe(429);
    const behindProxy = await testServer([{ text: 'hi' }], {
      server: { limits: { maxFailedAuthPerMinute: 3 }, trustedProxies: ['10.1.1.1'] },
    });
    await behindProxy.cadre.users.add('alice');
    expect(await flood(behindProxy.app)).toBe(401);
    // The forwarded address itself is limited: the same client through the proxy again and again.
    for (let i = 0; i < 3; i++) {
      await behindProxy.app.request(
        '/api/sessions',
        { headers: { ...bearer('wrong'), 'x-forwarded-for': '198.51.100.7, 10.1.1.1' } },
        from('::ffff:10.1.1.1'),
      );
    }
    const limited = await behindProxy.app.request(
      '/api/sessions',
      { headers: { ...bearer('wrong'), 'x-forwarded-for': '198.51.100.7' } },
      from('10.1.1.1'),
    );
    expect(limited.status).toBe(429);
  });
});

describe('slow clients', () => {
  it('closes a connection whose headers arrive a byte at a time past the headers timeout', async () => {
    const { cadre } = await testServer([{ text: 'hi' }]);
    const server = await startServer({
      cadre,
      host: '127.0.0.1',
      port: 0,
      headersTimeoutSeconds: 1,
      requestTimeoutSeconds: 1,
    });
    running.push(server);
    const socket = connect(server.port, '127.0.0.1');
    const started = performance.now();
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      answer += chunk;
    });
    // The server cuts the connection while the client still drips: a reset is expected, the close is awaited.
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const drip = setInterval(() => socket.write('X'), 200);
    await closed;
    clearInterval(drip);
    // Node's defaults held such a client for 60-90 s.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(answer).toMatch(/^HTTP\/1.1 408/);
  });
});
