import { describe, expect, it } from 'vitest';
import { jsonRequest, testServer } from '../../test/helpers/server.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('ids with control characters', () => {
  it('are refused with 400 on every route that takes one, before any store sees them', async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }]);
    const { token } = await cadre.users.add('alice');
    const auth = bearer(token);
    const routes: Array<[string, string, RequestInit?]> = [
      ['GET', '/api/sessions/s%00x'],
      ['DELETE', '/api/sessions/s%00x'],
      ['PATCH', '/api/sessions/s%00x', jsonRequest('PATCH', { title: 't' }, auth)],
      ['GET', '/api/sessions/s%00x/export?format=md'],
      ['GET', '/api/chat/s%00x/stream'],
      ['GET', '/api/runs/r%00x'],
      ['GET', '/api/runs/r%00x/events'],
      ['POST', '/api/runs/r%00x/cancel'],
      ['POST', '/api/runs/r%00x/resume'],
      ['POST', '/api/approvals/a%00x', jsonRequest('POST', { approved: true }, auth)],
      ['DELETE', '/api/documents/d%00x'],
      ['PATCH', '/api/agents/research%00', jsonRequest('PATCH', { enabled: false }, auth)],
      ['GET', '/api/documents/search?q=tides&document=d%00x'],
      ['GET', '/api/documents/search?q=t%01ides'],
    ];
    for (const [method, path, init] of routes) {
      const response = await app.request(path, { method, headers: auth, ...init });
      expect([method, path, response.status]).toEqual([method, path, 400]);
    }
    const chat = await app.request(
      '/api/chat',
      jsonRequest(
        'POST',
        { id: 's\u0000x', messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] },
        auth,
      ),
    );
    expect(chat.status).toBe(400);
  });
});
