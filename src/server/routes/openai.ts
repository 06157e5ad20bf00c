import { randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { enabledAgents } from '../../app/complete.ts';
import type { CadreEvent, RunStatus, Source, Usage } from '../../core/index.ts';
import { CadreError } from '../../core/index.ts';
import { httpError } from '../http-errors.ts';
import type { ServerEnv } from '../server-env.ts';

/** The model name of the main agent; every other model name is an agent's own. */
export const MAIN_MODEL = 'cadre';

const content = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  z.null(),
]);
const completionBody = z.looseObject({
  model: z.string().min(1).max(200),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
        content: content.optional(),
        tool_calls: z.array(z.unknown()).nullish(),
        function_call: z.unknown().optional(),
      }),
    )
    .min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  tools: z.array(z.unknown()).nullish(),
  functions: z.array(z.unknown()).nullish(),
  n: z.number().int().min(1).nullish(),
  response_format: z.looseObject({ type: z.string() }).nullish(),
});

/**
 * What a request asks for that this door does not do, for a 400 naming the field (undefined when nothing):
 * several choices, a JSON response format, a prefill after the question, OpenAI-style function calling (the
 * agents call their own tools) and content parts other than text (an image would otherwise be dropped
 * without a word). Empty `tools` and the like, which clients send when
 * they have none, are fine.
 */
function unsupportedIn(body: z.infer<typeof completionBody>): { param: string; message: string } | undefined {
  const tooling = (param: string, found: string) => ({
    param,
    message:
      `${param}: found ${found}, but this server does not take tools, tool calls or tool results (its ` +
      'agents call their own tools). Send the conversation as system, user and assistant text.',
  });
  if (body.n != null && body.n > 1)
    return {
      param: 'n',
      message: `n: ${body.n} choices were asked for; this server gives one answer per request.`,
    };
  if (body.response_format && body.response_format.type !== 'text') {
    const param = 'response_format.type';
    return {
      param,
      message: `${param}: "${body.response_format.type}" is not supported; this server answers in text.`,
    };
  }
  if (body.tools?.length) return tooling('tools', 'tools');
  if (body.functions?.length) return tooling('functions', 'functions');
  for (const [index, message] of body.messages.entries()) {
    if (message.role === 'tool' || message.role === 'function')
      return tooling(`messages[${index}].role`, `a "${message.role}" message`);
    if (message.tool_calls?.length) return tooling(`messages[${index}].tool_calls`, 'tool calls');
    if (message.function_call != null) return tooling(`messages[${index}].function_call`, 'a function call');
    if (!Array.isArray(message.content)) continue;
    const part = message.content.findIndex((candidate) => candidate.type !== 'text');
    if (part < 0) continue;
    const param = `messages[${index}].content[${part}].type`;
    return {
      param,
      message: `${param}: "${message.content[part]!.type}" parts are not supported; this server reads text only.`,
    };
  }
  // A conversation ends with the question: an assistant message after it (a prefill to continue) would be
  // dropped, and the answer would not continue it.
  const lastUser = body.messages.findLastIndex((message) => message.role === 'user');
  const prefill = body.messages.findIndex(
    (message, index) => index > lastUser && message.role === 'assistant',
  );
  if (lastUser >= 0 && prefill >= 0) {
    const param = `messages[${prefill}]`;
    return {
      param,
      message: `${param}: an assistant message after the last user message (a prefill) is not supported; end the conversation with the question.`,
    };
  }
  return undefined;
}

/** OpenAI's error `type` for a status: `server_error` for 5xx, else `invalid_request_error` (as OpenAI's own API, 401 included). */
function openAIErrorType(status: number): string {
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** An error in OpenAI's shape, so OpenAI clients raise their usual exceptions. */
function openAIError(
  c: Context<ServerEnv>,
  status: number,
  message: string,
  extra: { type?: string; code?: string; param?: string } = {},
) {
  const type = extra.type ?? openAIErrorType(status);
  return c.json(
    { error: { message, type, param: extra.param ?? null, code: extra.code ?? null } },
    status as 400,
  );
}

/**
 * Mounted on `/v1/*` before the server's auth and body limits: their refusals (401, 413) and the 404 for
 * a route this door does not have come in Cadre's `{error: {code, message}}`; this gives them OpenAI's
 * `{error: {message, type, param, code}}`, which OpenAI clients read.
 */
export function openAIErrorShape(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    await next();
    const { status } = c.res;
    if (status < 400 || !c.res.headers.get('content-type')?.includes('application/json')) return;
    const body = (await c.res
      .clone()
      .json()
      .catch(() => undefined)) as { error?: { code?: unknown; message?: unknown } } | undefined;
    const error = body?.error;
    if (!error || typeof error.message !== 'string' || 'type' in error) return;
    const code = typeof error.code === 'string' ? error.code : null;
    c.res = new Response(
      JSON.stringify({ error: { message: error.message, type: openAIErrorType(status), param: null, code } }),
      { status, headers: { 'content-type': 'application/json' } },
    );
    // The setter keeps the old response's headers (WWW-Authenticate, security headers): not its length.
    c.res.headers.delete('content-length');
  };
}

function text(value: z.infer<typeof content> | undefined): string {
  if (typeof value === 'string') return value;
  if (!value) return '';
  return value.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

function finishReason(status: RunStatus): 'stop' | 'length' {
  return status === 'ok' || status === 'error' || status === 'cancelled' ? 'stop' : 'length';
}

/**
 * The answer's cited links, each marked verified or not, as response metadata: OpenAI clients ignore a
 * field they do not know, and a Cadre-aware one can flag links no tool returned. Absent when none.
 */
function sourcesMetadata(sources: Source[] | undefined): { metadata?: { sources: Source[] } } {
  return sources?.length ? { metadata: { sources } } : {};
}

function openAIUsage(usage: Usage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
    // OpenAI's own detail fields, so a client that reads them sees the cache and reasoning parts.
    ...(usage.cacheReadTokens ? { prompt_tokens_details: { cached_tokens: usage.cacheReadTokens } } : {}),
    ...(usage.reasoningTokens
      ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }
      : {}),
  };
}

/**
 * The OpenAI-compatible door: `POST /v1/chat/completions` (streamed or not) and `GET /v1/models`. The
 * model names an agent (`cadre` is the main agent); the last user message is the task and the messages
 * before it are the history. Streamed, the main agent's text comes as `content` and its sub-agents' starts
 * and ends as `reasoning_content` lines; a caller that disconnects stops the tree.
 */
export function openAIRoutes(options: { maxConcurrentChats: number }): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.onError((error, c) => {
    const mapped = httpError(error);
    return openAIError(c, mapped.status, mapped.body.error.message, { code: mapped.body.error.code });
  });

  routes.get('/models', async (c) => {
    const created = Math.floor(Date.now() / 1000);
    const agents = (await enabledAgents(c.var.cadre, c.var.userId)).filter((agent) => agent.name !== 'main');
    const data = [
      { id: MAIN_MODEL, object: 'model', created, owned_by: 'cadre' },
      ...agents.map((agent) => ({ id: agent.name, object: 'model', created, owned_by: 'cadre' })),
    ];
    return c.json({ object: 'list', data });
  });

  routes.post('/chat/completions', async (c) => {
    const parsed = completionBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return openAIError(c, 400, `Invalid request: ${z.prettifyError(parsed.error)}`);
    const body = parsed.data;
    const unsupported = unsupportedIn(body);
    if (unsupported)
      return openAIError(c, 400, unsupported.message, { param: unsupported.param, code: 'unsupported' });
    const { cadre, userId } = c.var;
    const agent = body.model === MAIN_MODEL ? 'main' : body.model;
    if (!(await enabledAgents(cadre, userId)).some((candidate) => candidate.name === agent)) {
      return openAIError(c, 404, `The model "${body.model}" does not exist. See GET /v1/models.`, {
        code: 'model_not_found',
        param: 'model',
      });
    }
    const lastUser = body.messages.findLastIndex((message) => message.role === 'user');
    if (lastUser < 0)
      return openAIError(c, 400, 'The messages need at least one user message.', { param: 'messages' });
    const instructions = body.messages
      .filter((message) => message.role === 'system' || message.role === 'developer')
      .map((message) => text(message.content))
      .filter(Boolean);
    const history: ModelMessage[] = body.messages
      .slice(0, lastUser)
      .flatMap((message): ModelMessage[] =>
        message.role === 'user' || message.role === 'assistant'
          ? [{ role: message.role, content: text(message.content) }]
          : [],
      );
    const question = text(body.messages[lastUser]!.content);
    const task = instructions.length ? `${instructions.join('\n\n')}\n\n${question}` : question;
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const request = {
      userId,
      agent,
      task,
      history,
      signal: c.req.raw.signal,
      maxConcurrentChats: options.maxConcurrentChats,
    };

    if (!body.stream) {
      const { envelope } = await (await cadre.complete(request)).result;
      if (envelope.status === 'error') return openAIError(c, 502, envelope.summary, { code: 'run_error' });
      return c.json({
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: envelope.summary, refusal: null },
            logprobs: null,
            finish_reason: finishReason(envelope.status),
          },
        ],
        usage: openAIUsage(envelope.subtreeUsage),
        ...sourcesMetadata(envelope.sources),
      });
    }

    // As OpenAI's own API: with `include_usage`, every chunk carries `usage: null` and one more chunk with
    // no choices carries the usage before [DONE]; without it, no chunk has a usage field.
    const includeUsage = body.stream_options?.include_usage === true;
    const frame = (choices: unknown[], usage?: Usage, extra: object = {}) =>
      JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        choices,
        ...(includeUsage ? { usage: usage ? openAIUsage(usage) : null } : {}),
        ...extra,
      });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: object = {}) =>
      frame([{ index: 0, delta, logprobs: null, finish_reason: finish }], undefined, extra);
    const streamError = (message: string, code: string | null) =>
      JSON.stringify({ error: { message, type: 'server_error', param: null, code } });
    const translate = (event: CadreEvent): string | undefined => {
      if (event.depth === 0 && event.type === 'text-delta') return chunk({ content: event.delta });
      if (event.depth > 0 && event.type === 'run-start')
        return chunk({ reasoning_content: `→ ${event.agent}: ${event.task}\n` });
      if (event.depth > 0 && event.type === 'run-finish')
        return chunk({
          reasoning_content: `${event.status === 'ok' ? '✓' : '✗'} ${event.agent} ${event.status}\n`,
        });
      return undefined;
    };
    // Refusals before the tree starts (no model, too many answers) are plain HTTP errors. A tree that
    // waits on the queue for a worker opens the stream first, saying so in an SSE comment (which OpenAI
    // clients skip), so a client sees at once that its question is queued.
    let queued = () => {};
    const waiting = new Promise<'queued'>((resolve) => {
      queued = () => resolve('queued');
    });
    const starting = cadre.complete({ ...request, onQueued: () => queued() });
    const first = await Promise.race([starting, waiting]);
    return streamSSE(c, async (stream) => {
      const stopped = new AbortController();
      stream.onAbort(() => stopped.abort());
      await stream.writeSSE({ data: chunk({ role: 'assistant', content: '' }) });
      let tree: Awaited<typeof starting>;
      if (first === 'queued') {
        await stream.write(': queued: no worker has taken it yet\n\n');
        try {
          tree = await starting;
        } catch (error) {
          // Withdrawn after waiting too long (queue_timeout), or refused by the worker.
          const message = error instanceof CadreError ? error.message : 'The run failed on the server.';
          const code = error instanceof CadreError ? error.code : null;
          await stream.writeSSE({ data: streamError(message, code) });
          await stream.writeSSE({ data: '[DONE]' });
          return;
        }
      } else tree = first;
      for await (const { event } of tree.events({ signal: stopped.signal })) {
        const data = translate(event);
        if (data !== undefined) await stream.writeSSE({ data });
      }
      try {
        const { envelope } = await tree.result;
        // A failed run is an error here too (502 unstreamed), which OpenAI clients raise mid-stream.
        if (envelope.status === 'error')
          await stream.writeSSE({ data: streamError(envelope.summary, 'run_error') });
        else {
          const last = chunk({}, finishReason(envelope.status), sourcesMetadata(envelope.sources));
          await stream.writeSSE({ data: last });
          if (includeUsage) await stream.writeSSE({ data: frame([], envelope.subtreeUsage) });
        }
      } catch (error) {
        const message = error instanceof CadreError ? error.message : 'The run failed on the server.';
        await stream.writeSSE({ data: streamError(message, null) });
      }
      await stream.writeSSE({ data: '[DONE]' });
    });
  });
  return routes;
}
