import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { agentToolSpecs, callAgentTool } from '../../app/agent-tools.ts';
import type { Cadre } from '../../app/create-cadre.ts';
import { VERSION } from '../../app/version.ts';
import { describeError, RUN_STATUSES } from '../../core/index.ts';
import { ProgressReporter } from './progress.ts';

const usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() });

/** The result envelope, as the `structuredContent` of every agent tool's result. */
const envelopeSchema = z.object({
  status: z.enum(RUN_STATUSES),
  summary: z.string(),
  data: z.unknown().optional(),
  sources: z
    .array(z.object({ url: z.string(), title: z.string().optional(), verified: z.boolean() }))
    .optional(),
  usage,
  subtreeUsage: usage,
  runId: z.string(),
});
const ENVELOPE_JSON_SCHEMA = z.toJSONSchema(envelopeSchema, { io: 'input' }) as {
  type: 'object';
  [key: string]: unknown;
};
delete (ENVELOPE_JSON_SCHEMA as Record<string, unknown>).$schema;

/**
 * tools/call with its params left open. The SDK checks a request against the schema a handler is
 * registered with before its own tools/call check, and answers a failure of the first as an internal error
 * (-32603); registered with this one, a malformed call (arguments that are not an object, no name) fails the
 * SDK's own check instead: Invalid params (-32602), naming the field. The handler then parses what passed.
 */
const OPEN_CALL_REQUEST = z.object({ method: z.literal('tools/call'), params: z.unknown() });

/**
 * Cadre's agents as MCP tools for one user: one tool per enabled agent (input `{task}` plus its declared
 * inputs), each call a run tree with all of Cadre's limits. The result is the envelope as
 * `structuredContent` and its summary as text; a run that did not end `ok` sets `isError`. With a progress
 * token, sub-agents starting and finishing and tool calls are sent as progress notifications; a client's
 * `notifications/cancelled` cancels the tree (recorded `cancelled`), and so do closing the server and the
 * door's own reasons (`stopSignal`). The same server speaks stdio
 * (`cadre mcp`) and Streamable HTTP (`/mcp` on `cadre serve`). `inFlight` holds the calls not yet answered,
 * so a front door can wait for their trees to be stored (and their answers sent) before it closes.
 */
export function createAgentMcpServer(
  cadre: Cadre,
  userId: string,
  options: {
    inFlight?: Set<Promise<unknown>>;
    /**
     * A signal that stops a call for a reason of the door's, or undefined: over HTTP, the connection its
     * answer goes back on is gone for good (the streams are not resumable, so nobody could receive it), or
     * its session is being closed. On stdio, closing the transport stops the calls.
     */
    stopSignal?: (extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => AbortSignal | undefined;
    /** Says why a call may not start now (too many running), or undefined to let it run. */
    admit?: () => string | undefined;
  } = {},
): Server {
  const server = new Server(
    { name: 'cadre', title: 'Cadre', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'Each tool is a Cadre agent that works in its own context with its own tools and limits. Give it ' +
        'the whole task in `task`: it sees nothing of this conversation.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await agentToolSpecs(cadre, userId)).map((spec) => ({
      name: spec.name,
      description: spec.description,
      inputSchema: spec.inputSchema,
      outputSchema: ENVELOPE_JSON_SCHEMA,
      annotations: { readOnlyHint: false, openWorldHint: true },
    })),
  }));
  const answer = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const progressToken = request.params._meta?.progressToken;
    const progress =
      progressToken === undefined
        ? undefined
        : new ProgressReporter(
            (notification: ServerNotification) => extra.sendNotification(notification),
            progressToken,
          );
    const stop = options.stopSignal?.(extra);
    try {
      const envelope = await callAgentTool(cadre, {
        userId,
        agent: request.params.name,
        arguments: request.params.arguments ?? {},
        signal: stop ? AbortSignal.any([extra.signal, stop]) : extra.signal,
        ...(progress ? { onEvent: (event) => progress.event(event) } : {}),
      });
      await progress?.flush();
      const text = envelope.status === 'ok' ? envelope.summary : `[${envelope.status}] ${envelope.summary}`;
      return {
        content: [{ type: 'text', text }],
        structuredContent: envelope as unknown as Record<string, unknown>,
        isError: envelope.status !== 'ok',
      };
    } catch (error) {
      return { content: [{ type: 'text', text: describeError(error) }], isError: true };
    }
  };
  server.setRequestHandler(OPEN_CALL_REQUEST, (unchecked, extra) => {
    const request = CallToolRequestSchema.parse(unchecked);
    const refusal = options.admit?.();
    if (refusal) return Promise.resolve({ content: [{ type: 'text', text: refusal }], isError: true });
    const answering = answer(request, extra);
    options.inFlight?.add(answering);
    return answering.finally(() => options.inFlight?.delete(answering));
  });
  return server;
}
