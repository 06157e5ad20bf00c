import { createUIMessageStream, createUIMessageStreamResponse } from 'ai';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { AnswerChunks } from '../../app/answer/answer-chunks.ts';
import type { CadreUIMessage } from '../../app/answer/protocol.ts';
import type { TreeHandle } from '../../app/tree-handle.ts';
import type { CadreEvent } from '../../core/index.ts';
import { nestingDepth, UserError } from '../../core/index.ts';
import { type CoalescerOptions, DeltaCoalescer } from '../delta-coalescer.ts';
import { httpError, internalErrorLine } from '../http-errors.ts';
import { hasControlCharacter } from '../request-guards.ts';
import type { ServerEnv } from '../server-env.ts';

const chatBody = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .refine((id) => !hasControlCharacter(id), 'an id without control characters'),
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

/** A document attached to the question: a `data-attachment` part of the person's message. */
const attachmentPart = z.object({
  type: z.literal('data-attachment'),
  data: z.object({ documentId: z.string().min(1).max(200), title: z.string().max(500) }),
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
    const attachments = last.parts.flatMap((part) => {
      const attached = attachmentPart.safeParse(part);
      return attached.success ? [attached.data.data] : [];
    });

    // Refusals and set-up errors (unknown session, too many chats, an answer still running in the
    // session, no model) are plain HTTP errors: the tree has not started when they happen. A question
    // that waits on the queue for a worker opens the stream first, saying so (see `answerStream`).
    let queuedAs: string | undefined;
    let queued = () => {};
    const waiting = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const asking = c.var.cadre.ask({
      userId: c.var.userId,
      sessionId,
      createSession: true,
      message: text,
      ...(last.id ? { messageId: last.id } : {}),
      messageParts: last.parts,
      ...(attachments.length ? { attachments } : {}),
      ...(agent ? { agent } : {}),
      maxConcurrent: options.maxConcurrentChats,
      onQueued: (rootRunId) => {
        queuedAs = rootRunId;
        queued();
      },
    });
    const answer = asking.then((run) => ({ tree: run, answerId: run.answerId }));
    // A refusal is answered below from `asking`; the stream reads `answer` only once it has started.
    answer.catch(() => {});
    await Promise.race([asking, waiting]);
    return answerStream(c, answer, sessionId, options, queuedAs ? { queued: queuedAs } : {});
  });
  // AI SDK's resume endpoint (`useChat({ resume: true })`): a page opened, reloaded or switched to while an
  // answer is being written attaches to it, replayed from its first event and then live; 204 when none is.
  // A question still waiting on the queue for a worker is attached to as well: the page is told it is
  // queued, as the asking page was, and then gets the answer once a worker begins it.
  routes.get('/:id/stream', async (c) => {
    const sessionId = c.req.param('id');
    const { sessions } = c.var.cadre;
    const running = await sessions.runningAnswer(c.var.userId, sessionId);
    if (running) return answerStream(c, Promise.resolve(running), sessionId, options);
    const waiting = await sessions.waitingAnswer(c.var.userId, sessionId, c.req.raw.signal);
    if (!waiting) return c.body(null, 204);
    return answerStream(c, waiting.started, sessionId, options, { queued: waiting.rootRunId });
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

/** What the page is told while its question waits for a worker (a transient `data-queued` part). */
const QUEUED = 'Queued: no worker has taken it yet';

/**
 * One answer's tree as AI SDK's UI message stream, from its first event (a client attaching late gets the
 * whole answer replayed, as `useChat` expects of a resumed stream) until it has ended. A client that goes
 * away stops only its own reading: the tree runs on and its answer is stored either way. A tree still
 * waiting on the queue (`queued`) is announced first, in a transient part the page shows and does not
 * store; if it is withdrawn instead (no worker in time), the stream fails saying why.
 */
function answerStream(
  c: Context<ServerEnv>,
  starting: Promise<{ tree: TreeHandle<unknown>; answerId: string } | undefined>,
  sessionId: string,
  options: ChatRouteOptions,
  { queued }: { queued?: string } = {},
): Response {
  const gone = c.req.raw.signal;
  const stream = createUIMessageStream<CadreUIMessage>({
    execute: async ({ writer }) => {
      // With the root id the tree will have: the page's Stop withdraws it by that id.
      if (queued)
        writer.write({ type: 'data-queued', data: { message: QUEUED, rootRunId: queued }, transient: true });
      const begun = await starting;
      // (The client went away while its question waited.)
      if (!begun) return;
      const { tree, answerId } = begun;
      const chunks = new AnswerChunks(answerId, sessionId, c.var.cadre.config.pricing);
      for (const chunk of chunks.start()) writer.write(chunk);
      const coalescer = new DeltaCoalescer((event: CadreEvent) => {
        for (const chunk of chunks.event(event)) writer.write(chunk);
      }, options.coalescing);
      for await (const { event } of tree.events({ signal: gone })) coalescer.push(event);
      coalescer.flush();
      if (gone.aborted) return;
      // A system fault in the tree fails the stream here (onError); how a run ended is in its events.
      await tree.result;
      for (const chunk of chunks.end({ status: 'interrupted' })) writer.write(chunk);
    },
    onError: (error) => {
      const mapped = httpError(error);
      if (mapped.internal) options.log?.(internalErrorLine(c.req.method, c.req.path, error));
      return mapped.body.error.message;
    },
  });
  return createUIMessageStreamResponse({ stream });
}
