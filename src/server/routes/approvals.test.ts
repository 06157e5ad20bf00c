import { describe, expect, it } from 'vitest';
import {
  chatBody,
  isMain,
  isMath,
  postJson,
  readChunks,
  readMessage,
  testServer,
} from '../../../test/helpers/server.ts';
import type { ScriptedRequest } from '../../models/scripted-model.ts';

/** Main asks math; math's calculate call needs approval (config ask rule), so the sub-agent waits. */
function delegation(request: ScriptedRequest) {
  const fromTool = request.prompt.at(-1)?.role === 'tool';
  if (isMain(request.system)) {
    if (!fromTool) return { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] };
    const last = JSON.stringify(request.toolResults.at(-1)?.output);
    return { text: `main heard: ${last}` };
  }
  if (isMath(request.system)) {
    if (!fromTool) return { toolCalls: [{ name: 'calculate', input: { expression: '17 * 23' } }] };
    return { text: `math heard: ${JSON.stringify(request.toolResults.at(-1)?.output)}` };
  }
  return { text: 'unexpected agent' };
}

async function waitForPending(app: Awaited<ReturnType<typeof testServer>>['app']) {
  for (let i = 0; i < 500; i++) {
    const listed = (await (await app.request('/api/approvals')).json()) as { approvals: any[] };
    if (listed.approvals.length) return listed.approvals;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no approval became pending');
}

describe('approvals over HTTP', () => {
  it('a sub-agent waits for POST /api/approvals/:id; the answer lets its call run', async () => {
    const { app } = await testServer(delegation, { config: { approvals: { ask: ['calculate'] } } });
    const answer = app.request('/api/chat', postJson(chatBody('s1', 'What is 17 times 23?')));
    const [pending] = await waitForPending(app);
    expect(pending).toMatchObject({ tool: 'calculate', input: { expression: '17 * 23' } });
    expect(pending.path.map((step: { agent: string }) => step.agent)).toEqual(['main', 'math']);

    const decided = await app.request(`/api/approvals/${pending.approvalId}`, postJson({ approved: true }));
    expect(decided.status).toBe(200);
    expect(await decided.json()).toEqual({ approvalId: pending.approvalId, approved: true });
    const message = await readMessage(await readChunks(await answer));
    const text = message.parts
      .filter((part) => part.type === 'text')
      .map((part) => part.text)
      .join('');
    expect(text).toContain('391');

    // Answered once: the same id is no longer pending.
    const again = await app.request(`/api/approvals/${pending.approvalId}`, postJson({ approved: false }));
    expect(again.status).toBe(404);
  });

  it('a denial with a reason reaches the sub-agent as its tool error', async () => {
    const { app } = await testServer(delegation, { config: { approvals: { ask: ['calculate'] } } });
    const answer = app.request('/api/chat', postJson(chatBody('s2', 'What is 17 times 23?')));
    const [pending] = await waitForPending(app);
    await app.request(
      `/api/approvals/${pending.approvalId}`,
      postJson({ approved: false, reason: 'do it by hand' }),
    );
    const message = await readMessage(await readChunks(await answer));
    const text = message.parts
      .filter((part) => part.type === 'text')
      .map((part) => part.text)
      .join('');
    expect(text).toContain('do it by hand');
  });

  it('refuses a malformed body and an id that is not pending', async () => {
    const { app } = await testServer(delegation);
    const bad = await app.request('/api/approvals/apr_x', postJson({ approved: 'yes' }));
    expect(bad.status).toBe(400);
    const unknown = await app.request('/api/approvals/apr_x', postJson({ approved: true }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
