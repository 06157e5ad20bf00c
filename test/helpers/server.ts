import { parseJsonEventStream, readUIMessageStream, type UIMessageChunk, uiMessageChunkSchema } from 'ai';
import type { CadreUIMessage } from '../../src/app/answer/protocol.ts';
import { Cadre } from '../../src/app/create-cadre.ts';
import type { CadreConfig } from '../../src/config/schema.ts';
import { type Script, ScriptedModel, type ScriptedRequest } from '../../src/models/scripted-model.ts';
import { createServerApp, type ServerAppOptions } from '../../src/server/create-server-app.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempHome } from './cli.ts';

/** Who a scripted request is for, by the agent's instructions. */
export const isMain = (system: string) => system.includes('You are Cadre, an assistant');
export const isMath = (system: string) => system.includes("Cadre's maths sub-agent");

/**
 * Main delegates "17 * 23" to math, which calls `calculate` and answers; main then answers with the
 * product it read in math's result.
 */
export function mathDelegation(request: ScriptedRequest) {
  const fromTool = request.prompt.at(-1)?.role === 'tool';
  if (isMain(request.system)) {
    return fromTool
      ? { text: `The product is ${JSON.stringify(request.toolResults[0]?.output).match(/391/)?.[0]}.` }
      : { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] };
  }
  if (isMath(request.system)) {
    return fromTool
      ? { text: '17 * 23 = 391' }
      : { toolCalls: [{ name: 'calculate', input: { expression: '17 * 23' } }] };
  }
  return { text: 'unexpected agent' };
}

/** A promise a scripted model waits on (`gate`) until the test calls `release`: keeps answers running while it looks. */
export function heldGate(): { gate: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { gate, release };
}

/** A Cadre on an in-memory store whose every agent runs on one scripted model, and its HTTP app. */
export async function testServer(
  script: Script,
  options: {
    config?: CadreConfig;
    server?: Partial<Omit<ServerAppOptions, 'cadre'>>;
    /** Variables besides CADRE_HOME and CADRE_MODEL (provider keys and base URLs). */
    env?: Record<string, string>;
  } = {},
) {
  const model = new ScriptedModel(script);
  const store = openSqliteStore(':memory:');
  const cadre = await Cadre.create({
    env: { CADRE_HOME: tempHome(), CADRE_MODEL: 'scripted:test', ...options.env },
    cwd: tempHome(),
    store,
    models: { 'scripted:test': model },
    ...(options.config ? { flags: options.config } : {}),
  });
  const app = createServerApp({ cadre, ...options.server });
  return { cadre, app, model, store };
}

/** A JSON request for `app.request(path, init)`: a string body goes as it is (a malformed one too). */
export function jsonRequest(
  method: string,
  body: unknown,
  headers: Record<string, string> = {},
): RequestInit {
  return {
    method,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  };
}

/** A JSON `POST` (see jsonRequest). */
export const postJson = (body: unknown, headers: Record<string, string> = {}): RequestInit =>
  jsonRequest('POST', body, headers);

/** A chat request body as `useChat` sends it. */
export function chatBody(
  sessionId: string,
  text: string,
  messageId = `u_${Math.random().toString(36).slice(2)}`,
) {
  return JSON.stringify({
    id: sessionId,
    messages: [{ id: messageId, role: 'user', parts: [{ type: 'text', text }] }],
    trigger: 'submit-message',
  });
}

/** Every chunk of a UI message stream response, as the client parses them. */
export async function readChunks(response: Response): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return chunks;
    if (!value.success) throw value.error;
    chunks.push(value.value);
  }
}

/** The message `useChat` would end with, built by AI SDK's own reader from the chunks. */
export async function readMessage(chunks: UIMessageChunk[]): Promise<CadreUIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: CadreUIMessage | undefined;
  for await (const message of readUIMessageStream<CadreUIMessage>({
    stream: stream as never,
    terminateOnError: true,
  })) {
    last = message;
  }
  if (!last) throw new Error('the stream held no message');
  return last;
}
