import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { testServer } from '../../../test/helpers/server.ts';
import type { ScriptedReply, ScriptedRequest } from '../../models/scripted-model.ts';

type App = Awaited<ReturnType<typeof testServer>>['app'];

/** The official OpenAI client, talking to the app in-process through its fetch. */
function client(app: App, apiKey = 'unused') {
  return new OpenAI({
    baseURL: 'http://localhost/v1',
    apiKey,
    maxRetries: 0,
    fetch: (url, init) => Promise.resolve(app.request(String(url), init as RequestInit)),
  });
}

/** A plain POST /v1/chat/completions, as curl or a hand-written client sends it. */
function post(app: App, body: unknown, init: RequestInit = {}) {
  return app.request('/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });
}

const answer = (request: ScriptedRequest): ScriptedReply =>
  request.lastUserText.includes('fail')
    ? { error: { status: 400, message: 'the provider refused' } }
    : request.lastUserText.includes('slow')
      ? { text: 'finally', delayMs: 60_000 }
      : { text: 'hello there', usage: { inputTokens: 3, outputTokens: 2 } };

/** Every `data:` payload of an SSE response body, parsed (the closing `[DONE]` kept as a string). */
async function frames(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

describe('the OpenAI-compatible door, as OpenAI clients meet it', () => {
  it('streams usage only when stream_options.include_usage asks, in a last chunk with no choices', async () => {
    const { app } = await testServer(answer);
    const plain = await frames(
      await post(app, { model: 'cadre', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(plain.at(-1)).toBe('[DONE]');
    for (const frame of plain.slice(0, -1)) expect(frame).not.toHaveProperty('usage');

    const stream = await client(app).chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.choices).toHaveLength(1);
      expect(chunk.usage).toBeNull();
    }
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('hello there');
  });

  it('raises a failed run in a stream as the client raises it unstreamed, not as an empty answer', async () => {
    const { app } = await testServer(answer);
    const openai = client(app);
    const unstreamed = await openai.chat.completions
      .create({ model: 'cadre', messages: [{ role: 'user', content: 'fail' }] })
      .catch((caught: unknown) => caught);
    expect(unstreamed).toBeInstanceOf(OpenAI.APIError);
    expect((unstreamed as InstanceType<typeof OpenAI.APIError>).message).toMatch(/the provider refused/);

    const stream = await openai.chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: 'fail' }],
      stream: true,
    });
    const streamed = await (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) return chunk;
      return 'no error';
    })().catch((caught: unknown) => caught);
    expect(streamed).toBeInstanceOf(OpenAI.APIError);
    expect((streamed as InstanceType<typeof OpenAI.APIError>).message).toMatch(/the provider refused/);
    expect((streamed as InstanceType<typeof OpenAI.APIError>).code).toBe('run_error');
  });

  it('refuses tool calling (tools, tool results, assistant tool calls) with a 400 naming the field', async () => {
    const { app, model } = await testServer(answer);
    const openai = client(app);
    const refused = async (body: Record<string, unknown>) => {
      const error = await openai.chat.completions
        .create({ model: 'cadre', ...body } as never)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return error as InstanceType<typeof OpenAI.BadRequestError>;
    };
    const tools = await refused({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    });
    expect(tools.param).toBe('tools');
    expect(tools.message).toMatch(/does not take tools/);
    const functions = await refused({
      messages: [{ role: 'user', content: 'hi' }],
      functions: [{ name: 'lookup', parameters: { type: 'object' } }],
    });
    expect(functions.param).toBe('functions');
    const toolResult = await refused({
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '42' },
        { role: 'user', content: 'and?' },
      ],
    });
    expect(toolResult.param).toBe('messages[1].tool_calls');
    const functionRole = await refused({
      messages: [
        { role: 'function', name: 'lookup', content: '42' },
        { role: 'user', content: 'and?' },
      ],
    });
    expect(functionRole.param).toBe('messages[0].role');
    expect(functionRole.message).toMatch(/"function"/);
    expect(model.calls).toHaveLength(0);

    // What clients send when they have no tools is fine.
    const fine = await openai.chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      tool_choice: 'none',
    });
    expect(fine.choices[0]!.message.content).toBe('hello there');
  });

  it('refuses content parts it cannot read (an image) with a 400 naming the part, instead of dropping them', async () => {
    const { app, model } = await testServer(answer);
    const error = await client(app)
      .chat.completions.create({
        model: 'cadre',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this picture?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages[0].content[1].type');
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/"image_url".*text only/);
    expect(model.calls).toHaveLength(0);
    const text = await client(app).chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(text.choices[0]!.message.content).toBe('hello there');
  });

  it('refuses what it would otherwise answer wrongly (several choices, a JSON response format, a prefill), naming the field', async () => {
    const { app, model } = await testServer(answer);
    const refused = async (extra: Record<string, unknown>, messages?: unknown[]) => {
      const error = await client(app)
        .chat.completions.create({
          model: 'cadre',
          messages: (messages ?? [{ role: 'user', content: 'hi' }]) as never,
          ...extra,
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return error as InstanceType<typeof OpenAI.BadRequestError>;
    };
    expect((await refused({ n: 3 })).param).toBe('n');
    expect((await refused({ response_format: { type: 'json_object' } })).param).toBe('response_format.type');
    const schema = { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } };
    expect((await refused({ response_format: schema })).message).toMatch(/json_schema.*text/);
    const prefill = await refused({}, [
      { role: 'user', content: 'Name a colour.' },
      { role: 'assistant', content: 'The colour is' },
    ]);
    expect(prefill.param).toBe('messages[1]');
    expect(model.calls).toHaveLength(0);
    // What every client sends by default still works.
    const plain = await client(app).chat.completions.create({
      model: 'cadre',
      n: 1,
      response_format: { type: 'text' },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(plain.choices[0]!.message.content).toBe('hello there');
  });

  it("answers the server's own refusals on /v1 (token, body size, unknown route) in OpenAI's error shape", async () => {
    const { app } = await testServer(answer, {
      server: { singleUserToken: 'door-token', limits: { maxBodyBytes: 10_000 } },
    });
    const shape = {
      message: expect.any(String),
      type: expect.any(String),
      param: null,
      code: expect.any(String),
    };
    const anonymous = await post(app, { model: 'cadre', messages: [{ role: 'user', content: 'hi' }] });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="cadre"');
    expect(await anonymous.json()).toEqual({ error: { ...shape, type: 'invalid_request_error' } });
    const denied = await client(app, 'wrong')
      .models.list()
      .catch((caught: unknown) => caught);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((denied as InstanceType<typeof OpenAI.AuthenticationError>).type).toBe('invalid_request_error');

    const huge = await client(app, 'door-token')
      .chat.completions.create({ model: 'cadre', messages: [{ role: 'user', content: 'x'.repeat(20_000) }] })
      .catch((caught: unknown) => caught);
    expect(huge).toBeInstanceOf(OpenAI.APIError);
    expect((huge as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((huge as InstanceType<typeof OpenAI.APIError>).error).toEqual({
      ...shape,
      type: 'invalid_request_error',
      code: 'payload_too_large',
    });

    const elsewhere = await app.request('/v1/embeddings', {
      method: 'POST',
      headers: { authorization: 'Bearer door-token' },
    });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ error: { ...shape, type: 'invalid_request_error' } });
  });

  it('holds the per-user limit on running answers for requests that arrive at once', async () => {
    const { app, cadre } = await testServer(
      (request) => (request.lastUserText.includes('slow') ? { text: 'done', delayMs: 300 } : answer(request)),
      { server: { limits: { maxConcurrentChats: 1 } } },
    );
    const body = { model: 'cadre', messages: [{ role: 'user', content: 'slow' }] };
    const statuses = await Promise.all([post(app, body), post(app, body), post(app, body)]).then((all) =>
      all.map((response) => response.status),
    );
    expect(statuses.sort()).toEqual([200, 429, 429]);
    expect(cadre.live.countFor('local')).toBe(0);
    // A refused request gave nothing away: the next one runs.
    expect((await post(app, body)).status).toBe(200);
  });

  it('cancels the run tree when the client aborts a stream mid-way', async () => {
    const { app, cadre, store } = await testServer(answer);
    const controller = new AbortController();
    const stream = await client(app).chat.completions.create(
      { model: 'cadre', messages: [{ role: 'user', content: 'slow' }], stream: true },
      { signal: controller.signal },
    );
    // In process the aborted request's signal is what reaches the server, as a closed socket's does.
    await (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.role) controller.abort();
    })().catch(() => undefined);
    await expect.poll(() => cadre.live.countFor('local')).toBe(0);
    const runs = store.database.prepare('SELECT agent, status FROM runs').all();
    expect(runs).toEqual([{ agent: 'main', status: 'cancelled' }]);
  });
});
