import { randomUUID } from 'node:crypto';
import { createUIMessageStream, createUIMessageStreamResponse } from 'ai';
import { Hono } from 'hono';
import { z } from 'zod';
import { chat } from '../../app/chat.ts';
import { UserError } from '../../core/errors.ts';
import type { CadreEvent } from '../../core/events.ts';
import type { RunOutcome } from '../../core/runtime.ts';
import { nestingDepth } from '../../core/tool-call-bounds.ts';
import { AnswerMessageBuilder } from '../answer-message.ts';
import type { CadreUIMessage, ChatMessageMetadata } from '../chat-protocol.ts';
import { type CadreChunk, ChatStreamTranslator } from '../chat-stream.ts';
import { type CoalescerOptions, DeltaCoalescer } from '../delta-coalescer.ts';
import { httpError, internalErrorLine } from '../http-errors.ts';
import type { ServerEnv } from '../server-env.ts';

const chatBody = z.object({
  id: z.string().min(1).max(200),
  messages: z
    .array(
      z.looseObject({
        id: z.string().max(200).optional(),
        role: z.enum(['user', 'assistant', 'system']),
        parts: z.array(z.looseObject({ type: z.string() })),
      }),
    )
    .min(1),
  agent: z.string().min(1).max(100).optional(),
});

export interface ChatRouteOptions {
  maxConcurrentChats: number;
  /** Deepest nesting of arrays and objects a body may have (default 256). */
  maxJsonDepth?: number;
  /** How text deltas are merged on the wire (tests and benchmarks tune it). */
  coalescing?: CoalescerOptions;
  /** The server log: a bug met after the stream started is written here, as the app's own errors are. */
  log?: (line: string) => void;
}

/**
 * `POST /api/chat`: AI SDK's UI message stream for `useChat`. The body names the session (`id`) and
 * carries the conversation; only its last user message is new (the server keeps the history). The tree
 * runs on its own: a dropped connection only stops the writing, and the answer is stored either way.
 */
export function chatRoutes(options: ChatRouteOptions): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.post('/', async (c) => {
    const raw = await c.req.text();
    // Checked on the text, without recursion: a body nested 100,000 deep parses, but storing the
    // message's parts (JSON.stringify) would overflow the stack.
    const maxDepth = options.maxJsonDepth ?? 256;
    if (nestingDepth(raw, maxDepth) > maxDepth) {
      throw new UserError(
        'bad_request',
        `The chat body nests arrays and objects more than ${maxDepth} levels deep (server.maxJsonDepth).`,
        { maxDepth },
      );
    }
    const parsed = chatBody.safeParse(parseJson(raw));
    if (!parsed.success) {
      throw new UserError(
        'bad_request',
        `The chat body must be {id, messages}: ${z.prettifyError(parsed.error)}`,
      );
    }
    const { id: sessionId, messages, agent } = parsed.data;
    const last = messages.at(-1)!;
    if (last.role !== 'user') throw new UserError('bad_request', "The last message must be the person's.");
    const text = last.parts
      .filter((part) => part.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text as string)
      .join('\n');

    const translator = new ChatStreamTranslator();
    const builder = new AnswerMessageBuilder();
    const messageId = `msg_${randomUUID()}`;
    const metadata: ChatMessageMetadata = { sessionId };
    let write: (chunk: CadreChunk) => void = () => {};
    const buffered: CadreChunk[] = [];
    const send = (chunk: CadreChunk) => {
      builder.apply(chunk);
      write(chunk);
    };
    write = (chunk) => buffered.push(chunk);
    for (const chunk of translator.start(messageId, metadata)) send(chunk);

    let started: () => void = () => {};
    const runStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const coalescer = new DeltaCoalescer((event: CadreEvent) => {
      for (const chunk of translator.translate(event)) send(chunk);
      if (event.type === 'run-start' && event.parentRunId === null) {
        send({ type: 'message-metadata', messageMetadata: { sessionId, rootRunId: event.runId } });
        started();
      }
    }, options.coalescing);
    const onEvent = (event: CadreEvent) => coalescer.push(event);
    const answerMessage = (outcome: RunOutcome) => {
      coalescer.flush();
      const final: ChatMessageMetadata = {
        sessionId,
        rootRunId: outcome.envelope.runId,
        status: outcome.envelope.status,
        usage: outcome.envelope.subtreeUsage,
        delegationUsed: outcome.tree.children.length > 0,
      };
      send({ type: 'message-metadata', messageMetadata: final });
      send({ type: 'finish' });
      const message = builder.message();
      return { id: messageId, parts: message.parts, metadata: message.metadata };
    };
    const outcome = chat(c.var.cadre, {
      userId: c.var.userId,
      sessionId,
      message: { ...(last.id ? { id: last.id } : {}), text, parts: last.parts },
      ...(agent ? { agent } : {}),
      onEvent,
      answerMessage,
      maxConcurrentChats: options.maxConcurrentChats,
    });
    // Refusals and set-up errors (unknown session, too many chats, no model) are plain HTTP errors.
    await Promise.race([runStarted, outcome]);

    const stream = createUIMessageStream<CadreUIMessage>({
      execute: async ({ writer }) => {
        for (const chunk of buffered) writer.write(chunk);
        buffered.length = 0;
        write = (chunk) => writer.write(chunk);
        await outcome;
      },
      onError: (error) => {
        const mapped = httpError(error);
        if (mapped.internal) options.log?.(internalErrorLine('POST', c.req.path, error));
        return mapped.body.error.message;
      },
    });
    return createUIMessageStreamResponse({ stream });
  });
  return routes;
}

/** The body as JSON, or undefined when it is not JSON (the schema then names what was expected). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
