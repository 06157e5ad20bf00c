import { describe, expect, it, vi } from 'vitest';
import {
  chatBody,
  isMain,
  isMath,
  jsonRequest,
  postJson,
  readChunks,
  readMessage,
  testServer,
} from '../../../test/helpers/server.ts';
import type { CadreUIMessage, RunPartData } from '../../app/answer/protocol.ts';
import type { ScriptedRequest } from '../../models/scripted-model.ts';

/** Main delegates to math (one calculate call); every model call uses 1,000 tokens in and 100 out. */
function delegation(request: ScriptedRequest) {
  const usage = { inputTokens: 1000, outputTokens: 100 };
  const fromTool = request.prompt.at(-1)?.role === 'tool';
  if (isMain(request.system))
    return fromTool
      ? { text: 'The product is **391**.', usage }
      : { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }], usage };
  if (isMath(request.system))
    return fromTool
      ? { text: '17 * 23 = 391', usage }
      : { toolCalls: [{ name: 'calculate', input: { expression: '17 * 23' } }], usage };
  return { text: 'unexpected agent' };
}

const pricing = { 'scripted:test': { inputPerMillion: 0.25, outputPerMillion: 2 } };
/** One model call's cost at these prices: 1,000 × 0.25 / 1M + 100 × 2 / 1M. */
const CALL = 0.00045;

async function chat(
  app: Awaited<ReturnType<typeof testServer>>['app'],
  headers: Record<string, string> = {},
) {
  const response = await app.request('/api/chat', {
    ...postJson(chatBody('s1', 'What is 17 times 23?', 'u1')),
    headers: { 'content-type': 'application/json', ...headers },
  });
  expect(response.status).toBe(200);
  return readMessage(await readChunks(response));
}

function runParts(message: CadreUIMessage) {
  return message.parts.filter((part) => part.type === 'data-run').map((part) => part.data as RunPartData);
}

describe('a session renamed, exported, and priced', () => {
  it('renames a chat with PATCH /api/sessions/:id {title}, refusing an empty title and others’ chats', async () => {
    const { app, cadre } = await testServer(delegation);
    const alice = { authorization: `Bearer ${(await cadre.users.add('alice')).token}` };
    const bob = { authorization: `Bearer ${(await cadre.users.add('bob')).token}` };
    await chat(app, alice);
    const rename = (title: unknown, headers: Record<string, string>) =>
      app.request('/api/sessions/s1', {
        ...jsonRequest('PATCH', { title }),
        headers: { ...headers, 'content-type': 'application/json' },
      });

    const renamed = await rename('  Sums   for Lyon ', alice);
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ session: { id: 's1', title: 'Sums for Lyon' } });
    const list = (await (await app.request('/api/sessions', { headers: alice })).json()) as {
      sessions: Array<{ title: string }>;
    };
    expect(list.sessions.map((session) => session.title)).toEqual(['Sums for Lyon']);

    expect((await rename('   ', alice)).status).toBe(400);
    expect(await (await rename('x'.repeat(201), alice)).json()).toMatchObject({
      error: { code: 'bad_title' },
    });
    expect((await rename(42, alice)).status).toBe(400);
    // Bob's request names alice's chat: to him there is no such chat, and its title stays.
    expect((await rename('Mine now', bob)).status).toBe(404);
    expect(await (await app.request('/api/sessions/s1/export?format=md', { headers: bob })).status).toBe(404);
    const session = (await (await app.request('/api/sessions/s1', { headers: alice })).json()) as {
      title: string;
    };
    expect(session.title).toBe('Sums for Lyon');
  });

  it('exports a chat as Markdown and as JSON with its run trees, as a download', async () => {
    const { app } = await testServer(delegation, { config: { pricing } });
    await chat(app);

    const markdown = await app.request('/api/sessions/s1/export?format=md');
    expect(markdown.status).toBe(200);
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(markdown.headers.get('content-disposition')).toBe('attachment; filename="what-is-17-times-23.md"');
    const text = await markdown.text();
    expect(text).toMatch(/^# What is 17 times 23\?\n/);
    expect(text).toContain('## You\n\nWhat is 17 times 23?\n');
    expect(text).toContain('## Cadre\n\nThe product is **391**.\n');
    // Under the answer: how it ended, its tokens and cost, and the runs that made it, nested.
    expect(text).toContain('_done · 4,400 tokens · 0.0018 USD_');
    expect(text).toMatch(/- \*\*main\*\* \(done · .+\): What is 17 times 23\?/);
    expect(text).toMatch(
      /\n {2}- \*\*math\*\* \(done · .+ · 2,200 tokens · 0\.0009 USD\): Compute 17 \* 23\./,
    );
    expect(text).toContain('    - `calculate` `{"expression":"17 * 23"}` → ok');
    expect(text).toContain('    - Result: 17 * 23 = 391');

    const json = await app.request('/api/sessions/s1/export?format=json');
    expect(json.headers.get('content-disposition')).toBe('attachment; filename="what-is-17-times-23.json"');
    const body = (await json.json()) as {
      id: string;
      title: string;
      messages: CadreUIMessage[];
      runs: Array<{
        id: string;
        agent: string;
        subtreeCost: unknown;
        children: Array<{ agent: string; cost: unknown }>;
      }>;
    };
    expect(body).toMatchObject({ id: 's1', title: 'What is 17 times 23?' });
    expect(body.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(body.runs).toHaveLength(1);
    expect(body.runs[0]).toMatchObject({
      agent: 'main',
      subtreeCost: { amount: 4 * CALL, currency: 'USD' },
      children: [{ agent: 'math', cost: { amount: 2 * CALL, currency: 'USD' } }],
    });
    expect(body.runs[0]!.id).toBe(body.messages[1]!.metadata?.rootRunId);

    expect((await app.request('/api/sessions/s1/export?format=pdf')).status).toBe(400);
    expect((await app.request('/api/sessions/nope/export?format=md')).status).toBe(404);
  });

  it('gives the cost beside the tokens where a price is configured: stream, stored answer and run tree', async () => {
    const { app } = await testServer(delegation, { config: { pricing } });
    const live = await chat(app);
    const [main, math] = runParts(live);
    expect(math).toMatchObject({
      cost: { amount: 2 * CALL, currency: 'USD' },
      subtreeCost: { amount: 2 * CALL, currency: 'USD' },
    });
    expect(main).toMatchObject({
      cost: { amount: 2 * CALL, currency: 'USD' },
      subtreeCost: { amount: 4 * CALL, currency: 'USD' },
    });
    expect(live.metadata).toMatchObject({ usage: { totalTokens: 4400 }, cost: { amount: 4 * CALL } });

    const stored = (await (await app.request('/api/sessions/s1')).json()) as { messages: CadreUIMessage[] };
    const answer = stored.messages[1]!;
    expect(answer.metadata?.cost).toEqual({ amount: 4 * CALL, currency: 'USD' });
    expect(runParts(answer)[1]).toMatchObject({ cost: { amount: 2 * CALL } });

    const tree = (await (await app.request(`/api/runs/${main!.runId}`)).json()) as {
      usage: unknown;
      cost: unknown;
      subtreeCost: unknown;
    };
    expect(tree).toMatchObject({
      usage: { totalTokens: 2200 },
      cost: { amount: 2 * CALL, currency: 'USD' },
      subtreeCost: { amount: 4 * CALL, currency: 'USD' },
    });
  });

  it('gives no cost where no price is configured', async () => {
    const { app } = await testServer(delegation);
    const live = await chat(app);
    expect(live.metadata?.cost).toBeUndefined();
    for (const run of runParts(live)) expect(run.cost).toBeUndefined();
    const tree = (await (await app.request(`/api/runs/${live.metadata?.rootRunId}`)).json()) as object;
    expect(tree).not.toHaveProperty('cost');
    expect(tree).not.toHaveProperty('subtreeCost');
  });
});

describe('GET /api/sessions/events', () => {
  it('reads the chat list again only when the store tells of a change, never on a timer', async () => {
    const { cadre, store } = await testServer(() => ({ text: 'Done.' }));
    let reads = 0;
    const list = store.sessions.list.bind(store.sessions);
    store.sessions.list = (...args) => {
      reads++;
      return list(...args);
    };
    const stop = new AbortController();
    const changes = cadre.sessions.changes('local', { signal: stop.signal });
    expect((await changes.next()).value).toEqual([]);
    const turns = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const next = changes.next();
      await turns();
      // Read once more when watching began (what changed meanwhile); then nothing, however long it waits.
      expect(reads).toBe(2);
      await vi.advanceTimersByTimeAsync(10_000);
      await turns();
      expect(reads).toBe(2);
      await cadre.store.sessions.create('local', { id: 's-told', title: 'Told' });
      expect((await next).value).toMatchObject([{ id: 's-told', title: 'Told', answering: false }]);
      expect(reads).toBe(3);
    } finally {
      vi.useRealTimers();
      stop.abort();
      await changes.return(undefined);
    }
  });

  it('sends the chat list first, then again when a chat is made, with the answering mark while it answers', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { app } = await testServer(async () => {
      await held;
      return { text: 'Done.' };
    });
    const stop = new AbortController();
    const response = await app.request('/api/sessions/events', { signal: stop.signal });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    const nextList = async (): Promise<Array<{ id: string; title: string; answering: boolean }>> => {
      for (;;) {
        const end = buffered.indexOf('\n\n');
        if (end !== -1) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (data) return (JSON.parse(data.slice(6)) as { sessions: [] }).sessions;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffered += decoder.decode(value, { stream: true });
      }
    };
    expect(await nextList()).toEqual([]);
    const answer = app.request('/api/chat', postJson(chatBody('s-live', 'Owls at night')));
    // The chat is listed once it is made, then again once its answer has started (each change is told).
    let listed = await nextList();
    expect(listed).toMatchObject([{ id: 's-live', title: 'Owls at night' }]);
    while (!listed[0]?.answering) listed = await nextList();
    expect(listed).toMatchObject([{ id: 's-live', title: 'Owls at night', answering: true }]);
    release();
    await readChunks(await answer);
    let after = await nextList();
    while (after[0]?.answering) after = await nextList();
    expect(after).toMatchObject([{ id: 's-live', answering: false }]);
    stop.abort();
  });
});

describe('GET /api/sessions/search', () => {
  it("finds the caller's messages by their words as they are typed, with the matching line", async () => {
    const { app } = await testServer(() => ({ text: 'Barn owls listen for voles at night.' }));
    await readChunks(await app.request('/api/chat', postJson(chatBody('s-search', 'Where do owls hunt?'))));
    const response = await app.request('/api/sessions/search?q=vol');
    expect(response.status).toBe(200);
    const { matches } = (await response.json()) as { matches: Array<Record<string, string>> };
    expect(matches).toEqual([
      expect.objectContaining({
        sessionId: 's-search',
        sessionTitle: 'Where do owls hunt?',
        role: 'assistant',
      }),
    ]);
    expect(matches[0]?.line).toContain('voles');
    expect((await app.request('/api/sessions/search?q=')).status).toBe(400);
  });
});
