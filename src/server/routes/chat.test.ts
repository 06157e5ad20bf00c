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
import type { CadreUIMessage, RunPartData } from '../../app/answer/protocol.ts';
import type { CadreEvent } from '../../core/events.ts';
import type { ScriptedRequest } from '../../models/scripted-model.ts';

/** Main delegates one task to math, which calls `calculate` and answers; main then answers. */
function delegation(mathText = '17 * 23 = 391') {
  return (request: ScriptedRequest) => {
    const fromTool = request.prompt.at(-1)?.role === 'tool';
    if (isMain(request.system)) {
      return fromTool
        ? { text: 'The product is 391.' }
        : { text: 'Let me ask math. ', toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] };
    }
    if (isMath(request.system)) {
      return fromTool
        ? { text: mathText }
        : { toolCalls: [{ name: 'calculate', input: { expression: '17 * 23' } }] };
    }
    return { text: 'unexpected agent' };
  };
}

function runParts(message: CadreUIMessage) {
  return message.parts.filter((part) => part.type === 'data-run').map((part) => part.data as RunPartData);
}

describe('POST /api/chat', () => {
  it('streams a delegation as text, a dynamic tool part and data-run parts that useChat reads, and stores it', async () => {
    const { app, cadre } = await testServer(delegation());
    const response = await app.request('/api/chat', postJson(chatBody('s1', 'What is 17 times 23?', 'u1')));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const chunks = await readChunks(response);
    const live = await readMessage(chunks);

    // The main agent's text and its delegation as AI SDK parts.
    const texts = live.parts.filter((part) => part.type === 'text').map((part) => part.text);
    expect(texts.join('')).toBe('Let me ask math. The product is 391.');
    const tool = live.parts.find((part) => part.type === 'dynamic-tool');
    expect(tool).toMatchObject({
      toolName: 'math',
      state: 'output-available',
      input: { task: 'Compute 17 * 23.' },
    });

    // One data-run part per run, finished, the child nested under the main agent's tool call.
    const [main, math] = runParts(live);
    expect(main).toMatchObject({ agent: 'main', parentRunId: null, status: 'ok', depth: 0 });
    expect(math).toMatchObject({
      agent: 'math',
      task: 'Compute 17 * 23.',
      parentRunId: main!.runId,
      rootRunId: main!.runId,
      status: 'ok',
      parentToolCallId: (tool as { toolCallId: string }).toolCallId,
    });
    expect(math!.usage!.totalTokens).toBeGreaterThan(0);
    expect(main!.subtreeUsage!.totalTokens).toBe(main!.usage!.totalTokens + math!.usage!.totalTokens);
    // The child's work arrives as transient events, not in the message.
    const events = chunks
      .filter((chunk) => chunk.type === 'data-run-event')
      .map((chunk) => (chunk as { data: CadreEvent }).data);
    expect(events.filter((event) => event.runId === math!.runId).map((event) => event.type)).toEqual(
      expect.arrayContaining(['tool-call', 'tool-result', 'text-delta', 'step-finish']),
    );
    expect(live.parts.some((part) => part.type === 'data-run-event')).toBe(false);
    expect(live.metadata).toMatchObject({ sessionId: 's1', rootRunId: main!.runId, status: 'ok' });

    // What was stored is what was seen, plus each run's folded history and full summary.
    const stored = await app.request('/api/sessions/s1');
    expect(stored.status).toBe(200);
    const session = (await stored.json()) as { messages: Array<CadreUIMessage & { createdAt: string }> };
    expect(session.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(session.messages[0]).toMatchObject({
      id: 'u1',
      parts: [{ type: 'text', text: 'What is 17 times 23?' }],
    });
    const answer = session.messages[1]!;
    expect(answer.id).toBe(live.id);
    expect(answer.metadata).toEqual(live.metadata);
    const strip = (message: CadreUIMessage) =>
      JSON.parse(JSON.stringify(message.parts)).map(
        (part: { type: string; data?: Record<string, unknown> }) => {
          if (part.type !== 'data-run' || !part.data) return part;
          const {
            text: _t,
            toolCalls: _c,
            plan: _p,
            steps: _m,
            summary: _s,
            summaryChars: _n,
            ...header
          } = part.data;
          return { ...part, data: header };
        },
      );
    expect(strip(answer)).toEqual(strip(live));
    const [storedMain, storedMath] = runParts(answer);
    expect(storedMath).toMatchObject({ text: '17 * 23 = 391', summary: '17 * 23 = 391', steps: 2 });
    expect(storedMath!.toolCalls).toEqual([
      expect.objectContaining({ name: 'calculate', input: { expression: '17 * 23' }, ok: true }),
    ]);
    expect(storedMain).toMatchObject({ summary: 'The product is 391.' });
    expect(storedMain!.toolCalls).toEqual([expect.objectContaining({ name: 'math', ok: true })]);

    const list = (await (await app.request('/api/sessions')).json()) as {
      sessions: Array<{ id: string; title: string }>;
    };
    expect(list.sessions).toEqual([expect.objectContaining({ id: 's1', title: 'What is 17 times 23?' })]);
    // The run tree is there too.
    const tree = (await (await app.request(`/api/runs/${main!.runId}`)).json()) as { children: unknown[] };
    expect(tree.children).toHaveLength(1);
    cadre.close();
  });

  it("continues a session with its history and refuses another user's session id", async () => {
    const { app, model } = await testServer((request) => ({ text: `turn ${request.index}` }));
    await readChunks(await app.request('/api/chat', postJson(chatBody('s2', 'first'))));
    await readChunks(await app.request('/api/chat', postJson(chatBody('s2', 'second'))));
    const prompt = JSON.stringify(model.calls[1]!.prompt);
    expect(prompt).toContain('first');
    expect(prompt).toContain('turn 0');
    const session = (await (await app.request('/api/sessions/s2')).json()) as { messages: unknown[] };
    expect(session.messages).toHaveLength(4);
  });

  it('answers a bad body with 400 and an unknown agent with 404, before any stream', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const bad = await app.request('/api/chat', postJson('{"messages": 3}'));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    const unknown = await app.request(
      '/api/chat',
      postJson(JSON.stringify({ ...JSON.parse(chatBody('s3', 'hi')), agent: 'nobody' })),
    );
    expect(unknown.status).toBe(404);
    const body = (await unknown.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('unknown_agent');
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  });

  it('keeps the wire linear: 100 KB of sub-agent text costs at most 1.5 x 100 KB', async () => {
    const bigText = Array.from({ length: 4000 }, (_, index) => `word ${index} lorem ipsum dolor\n`)
      .join('')
      .slice(0, 100 * 1024);
    expect(bigText.length).toBe(100 * 1024);
    // The sub-agent writes 100 KB in one answer: more than the default maxOutputTokens lets a model write.
    const { app } = await testServer(delegation(bigText), {
      config: { limits: { maxOutputTokens: 64_000 } },
    });
    const response = await app.request('/api/chat', postJson(chatBody('s4', 'Write a lot.')));
    const raw = await response.text();
    expect(raw.length).toBeLessThanOrEqual(1.5 * bigText.length);
    const chunks = await readChunks(new Response(raw));
    const events = chunks
      .filter((chunk) => chunk.type === 'data-run-event')
      .map((chunk) => (chunk as { data: CadreEvent }).data);
    const streamed = events.map((event) => (event.type === 'text-delta' ? event.delta : '')).join('');
    expect(streamed).toBe(bigText);
  });

  it('keeps 50 runs x 200 events linear on the wire and in the stored message', async () => {
    const measure = async (runs: number) => {
      const { app } = await testServer(
        (request) => {
          const fromTool = request.prompt.at(-1)?.role === 'tool';
          if (isMain(request.system)) {
            if (fromTool) return { text: 'done' };
            return {
              toolCalls: Array.from({ length: runs }, (_, index) => ({
                name: 'math',
                input: { task: `Sum task ${index}` },
              })),
            };
          }
          if (fromTool) return { text: 'all summed' };
          // 100 calls in one step to a tool math may not use: each is refused at once (a call and a result
          // event), so 200 events per run besides start, step and finish, without running anything.
          return {
            toolCalls: Array.from({ length: 100 }, (_, index) => ({
              name: 'not_a_tool',
              input: { expression: `${index} + 1` },
            })),
          };
        },
        { config: { limits: { maxFanOut: 50, maxConcurrency: 50, maxToolCallsPerStep: 100 } } },
      );
      const started = performance.now();
      const raw = await (
        await app.request('/api/chat', postJson(chatBody(`s-${runs}`, 'Sum things.')))
      ).text();
      const ms = performance.now() - started;
      const chunks = await readChunks(new Response(raw));
      const events = chunks.filter((chunk) => chunk.type === 'data-run-event');
      const stored = await (await app.request(`/api/sessions/s-${runs}`)).text();
      return { bytes: raw.length, events: events.length, stored: stored.length, ms };
    };
    const small = await measure(10);
    const large = await measure(50);
    expect(large.events).toBeGreaterThanOrEqual(50 * 200);
    // Five times the runs: about five times the bytes, never twenty-five.
    expect(large.bytes / small.bytes).toBeLessThan(6);
    expect(large.stored / small.stored).toBeLessThan(6);
  }, 60_000);
});

describe('POST /api/chat with an attached document', () => {
  it('names the attached document to the agent, and keeps the chip part with the stored question', async () => {
    const seen: string[] = [];
    const { app, cadre } = await testServer((request) => {
      seen.push(JSON.stringify(request.prompt.filter((message) => message.role === 'user')));
      return { text: 'Read it.' };
    });
    const body = JSON.stringify({
      id: 's-attach',
      messages: [
        {
          id: 'u-attach',
          role: 'user',
          parts: [
            { type: 'text', text: 'What do my notes say?' },
            { type: 'data-attachment', data: { documentId: 'doc_123', title: 'Heron notes' } },
          ],
        },
      ],
    });
    const response = await app.request('/api/chat', postJson(body));
    expect(response.status).toBe(200);
    await readChunks(response);
    expect(seen[0]).toContain('\\"Heron notes\\" (document id doc_123)');
    const session = await cadre.sessions.get('local', 's-attach');
    const question = session?.messages.find((message) => message.id === 'u-attach');
    expect(JSON.stringify(question?.parts)).toContain('"data-attachment"');
  });
});
