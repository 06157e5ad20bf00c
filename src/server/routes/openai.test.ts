import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { isMain, isMath, testServer } from '../../../test/helpers/server.ts';
import type { ScriptedRequest } from '../../models/scripted-model.ts';

/** The official OpenAI client, talking to the app in-process through its fetch. */
function client(app: Awaited<ReturnType<typeof testServer>>['app'], apiKey = 'unused') {
  return new OpenAI({
    baseURL: 'http://localhost/v1',
    apiKey,
    maxRetries: 0,
    fetch: (url, init) => Promise.resolve(app.request(String(url), init as RequestInit)),
  });
}

function delegation(request: ScriptedRequest) {
  const fromTool = request.prompt.at(-1)?.role === 'tool';
  if (isMain(request.system)) {
    return fromTool
      ? { text: 'The product is 391.', usage: { inputTokens: 30, outputTokens: 7 } }
      : {
          toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }],
          usage: { inputTokens: 20, outputTokens: 5 },
        };
  }
  if (isMath(request.system)) return { text: '17 * 23 = 391', usage: { inputTokens: 10, outputTokens: 3 } };
  return { text: `plain answer from ${request.system.slice(0, 20)}` };
}

describe('the OpenAI-compatible door', () => {
  it('answers chat.completions.create with the main agent as model "cadre", usage summed over the tree', async () => {
    const { app, model } = await testServer(delegation);
    const completion = await client(app).chat.completions.create({
      model: 'cadre',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Earlier question' },
        { role: 'assistant', content: 'Earlier answer' },
        { role: 'user', content: 'What is 17 times 23?' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message).toMatchObject({
      role: 'assistant',
      content: 'The product is 391.',
    });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 60, completion_tokens: 15, total_tokens: 75 });
    const first = JSON.stringify(model.calls[0]!.prompt);
    expect(first).toContain('Earlier answer');
    expect(first).toContain('Answer briefly.');
  });

  it("carries the answer's cited links, each marked verified or not, as response metadata", async () => {
    const link = 'https://made-up.example/pi';
    const { app } = await testServer(() => ({ text: `Pi is 3.14159 (${link}).` }));
    const completion = await client(app).chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: 'What is pi?' }],
    });
    expect((completion as unknown as { metadata: unknown }).metadata).toEqual({
      sources: [{ url: link, verified: false }],
    });
    const stream = await client(app).chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: 'What is pi?' }],
      stream: true,
    });
    const metadata: unknown[] = [];
    for await (const chunk of stream) {
      const { metadata: found } = chunk as unknown as { metadata?: unknown };
      if (found) metadata.push(found);
    }
    expect(metadata).toEqual([{ sources: [{ url: link, verified: false }] }]);
  });

  it('streams the main agent text as content deltas and sub-agents as reasoning lines, ending with usage when asked', async () => {
    const { app } = await testServer(delegation);
    const stream = await client(app).chat.completions.create({
      model: 'cadre',
      messages: [{ role: 'user', content: 'What is 17 times 23?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let reasoning = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      content += choice?.delta.content ?? '';
      reasoning += (choice?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      finish = choice?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(content).toBe('The product is 391.');
    expect(reasoning).toBe('→ math: Compute 17 * 23.\n✓ math ok\n');
    expect(finish).toBe('stop');
    expect(usage?.total_tokens).toBe(75);
  });

  it("lets the model name one agent, lists cadre and the enabled agents, and 404s an unknown model in OpenAI's shape", async () => {
    const { app, cadre } = await testServer(delegation);
    const openai = client(app);
    const direct = await openai.chat.completions.create({
      model: 'math',
      messages: [{ role: 'user', content: '17*23?' }],
    });
    expect(direct.choices[0]!.message.content).toBe('17 * 23 = 391');

    await cadre.settings.updateAgent('local', 'research', { enabled: false });
    const models = [];
    for await (const listed of openai.models.list()) models.push(listed.id);
    expect(models[0]).toBe('cadre');
    expect(models).toContain('math');
    expect(models).not.toContain('research');
    expect(models).not.toContain('main');

    const error = await openai.chat.completions
      .create({ model: 'gpt-nonexistent', messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    const disabled = await openai.chat.completions
      .create({ model: 'research', messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(disabled).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('needs the bearer token once credentials exist (the client sends its apiKey as one)', async () => {
    const { app } = await testServer(delegation, { server: { singleUserToken: 'door-token' } });
    const refused = await client(app, 'wrong')
      .models.list()
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    const page = await client(app, 'door-token').models.list();
    expect(page.data[0]!.id).toBe('cadre');
  });
});
