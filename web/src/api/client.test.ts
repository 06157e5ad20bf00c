import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { errorFromResponse, fetchAskingForToken, onUnauthorized, setToken } from './client.ts';

/** localStorage as the browser has it, for the token the page keeps. */
function stubStorage() {
  const items = new Map<string, string>();
  vi.stubGlobal('localStorage', {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => items.set(key, value),
    removeItem: (key: string) => items.delete(key),
  });
}

const refused = () =>
  new Response(JSON.stringify({ error: { message: 'Missing or invalid token' } }), { status: 401 });

describe('a 401 from the server', () => {
  let asked = 0;
  let stop: () => void;
  beforeEach(() => {
    stubStorage();
    asked = 0;
    stop = onUnauthorized(() => asked++);
  });
  afterEach(() => {
    stop();
    vi.unstubAllGlobals();
  });

  it('asks for a token when it refused the one the page holds (or none, when none is held)', async () => {
    const error = await errorFromResponse(refused(), null);
    expect(error.status).toBe(401);
    expect(error.message).toBe('Missing or invalid token');
    expect(asked).toBe(1);
    setToken('wrong');
    await errorFromResponse(refused(), 'wrong');
    expect(asked).toBe(2);
  });

  it('does not when it answers a request sent before the token now held was given', async () => {
    setToken('right');
    // Sent with no token, then with a wrong one; both answered after the right one was given.
    await errorFromResponse(refused(), null);
    await errorFromResponse(refused(), 'wrong');
    expect(asked).toBe(0);
  });

  it("asks for a token from a library's request too (the chat's stream), and hands the response back", async () => {
    setToken('revoked');
    vi.stubGlobal('fetch', async () => refused());
    const response = await fetchAskingForToken('/api/chat/s1/stream');
    expect(response.status).toBe(401);
    expect(asked).toBe(1);
    vi.stubGlobal('fetch', async () => new Response(null, { status: 204 }));
    await fetchAskingForToken('/api/chat/s1/stream');
    expect(asked).toBe(1);
  });
});
