import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SystemError } from '../../core/index.ts';
import type { McpServerConfig } from './server-config.ts';

/** One tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export type McpServerState = 'stopped' | 'starting' | 'ready' | 'failed';

const DEFAULT_START_TIMEOUT_SECONDS = 30;
const DEFAULT_CALL_TIMEOUT_SECONDS = 120;
/**
 * The largest message a server may send. Bytes are counted as they arrive (the stdio transport's line
 * buffer, the HTTP response's body), and a server past it has its connection ended, so its calls fail
 * and it starts again on next use: 32 answers of 9 MB each once took the process to 1.1 GB, received
 * and parsed whole before the result was cut.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Lines of a server's stderr kept to explain why it failed. */
const STDERR_LINES = 20;

/**
 * The MCP SDK's client side (with its JSON-schema validator and process spawner, ~80 modules), loaded
 * when the first server starts: most commands never start one.
 */
async function loadSdk() {
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }, { ErrorCode, McpError }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
  return { Client, StdioClientTransport, StreamableHTTPClientTransport, ErrorCode, McpError };
}
type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/**
 * One configured MCP server: started on first use, shared by every run that uses it, restarted on the next
 * use after it exits, stopped when Cadre closes. Every failure (it cannot start, it exits during a call,
 * it does not answer in time) becomes a `SystemError` that names the server and says what happened, so
 * the tool call fails and the run goes on.
 */
export class McpServerConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  #client: Client | undefined;
  #starting: Promise<Client> | undefined;
  #tools: McpToolInfo[] | undefined;
  #lastError: string | undefined;
  /** Set by the first start; a call happens only after one. */
  #sdk: Sdk | undefined;
  #stderr: string[] = [];
  /** Set when the server sent a message past its limit (the reason its calls then fail). */
  #oversized: string | undefined;
  #closed = false;
  readonly #clientVersion: string;

  constructor(name: string, config: McpServerConfig, clientVersion: string) {
    this.name = name;
    this.config = config;
    this.#clientVersion = clientVersion;
  }

  get state(): McpServerState {
    if (this.#client) return 'ready';
    if (this.#starting) return 'starting';
    return this.#lastError ? 'failed' : 'stopped';
  }

  /** Why the last start or call failed, when it did. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** The tools listed at the last successful start. */
  get tools(): McpToolInfo[] | undefined {
    return this.#tools;
  }

  /** Starts the server if it is not running and lists its tools; concurrent callers share one start. */
  async start(): Promise<McpToolInfo[]> {
    await this.#connected();
    return this.#tools ?? [];
  }

  /** Calls one tool. `signal` cancels the call (the server is told); the configured timeout bounds it. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const client = await this.#connected();
    const timeoutSeconds = this.config.callTimeout ?? DEFAULT_CALL_TIMEOUT_SECONDS;
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: timeoutSeconds * 1000,
      })) as CallToolResult;
    } catch (error) {
      if (signal.aborted) throw error;
      throw this.#callError(tool, error, timeoutSeconds);
    }
  }

  /** Stops the server (a stdio child gets its stdin closed, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client ?? (await this.#starting?.catch(() => undefined));
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }

  #connected(): Promise<Client> {
    if (this.#client) return Promise.resolve(this.#client);
    if (this.#closed)
      return Promise.reject(new SystemError('mcp_closed', `MCP server "${this.name}" was stopped.`));
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #start(): Promise<Client> {
    const timeoutSeconds = this.config.startTimeout ?? DEFAULT_START_TIMEOUT_SECONDS;
    this.#sdk ??= await loadSdk();
    const client = new this.#sdk.Client({ name: 'cadre', version: this.#clientVersion });
    const transport = this.#transport(this.#sdk);
    const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
    try {
      await client.connect(transport, { signal: timeout, timeout: timeoutSeconds * 1000 });
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, {
          signal: timeout,
          timeout: timeoutSeconds * 1000,
        });
        tools.push(...page.tools.map(toToolInfo));
        cursor = page.nextCursor;
      } while (cursor);
      this.#tools = tools;
    } catch (error) {
      await client.close().catch(() => undefined);
      this.#lastError = timeout.aborted
        ? `did not start within ${timeoutSeconds} s`
        : `could not start: ${errorText(error)}`;
      throw new SystemError(
        'mcp_start_failed',
        `MCP server "${this.name}" ${this.#lastError}${this.#stderrTail()}`,
        {
          server: this.name,
        },
      );
    }
    this.#lastError = undefined;
    // A stdio server that exits, or an HTTP session that ends, closes the transport: forget the client so
    // the next use starts it again. Calls in flight are rejected by the SDK ("Connection closed").
    client.onclose = () => {
      if (this.#client === client) this.#client = undefined;
    };
    if (this.#closed) {
      await client.close().catch(() => undefined);
      throw new SystemError('mcp_closed', `MCP server "${this.name}" was stopped.`);
    }
    this.#client = client;
    return client;
  }

  #transport({ StdioClientTransport, StreamableHTTPClientTransport }: Sdk): Transport {
    const config = this.config;
    const maxBytes = config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const tooLarge = () => {
      this.#oversized = `sent a message over ${maxBytes} bytes (maxMessageBytes); its connection was ended`;
    };
    this.#oversized = undefined;
    if ('command' in config) {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        ...(config.env ? { env: config.env } : {}),
        ...(config.cwd ? { cwd: config.cwd } : {}),
        // Piped, never inherited: under `cadre mcp` stdout and stderr belong to the protocol and its logs.
        stderr: 'pipe',
        // The SDK's line buffer refuses a line past this as it grows, and closes the transport.
        maxBufferSize: maxBytes,
      });
      transport.onerror = (error) => {
        if (/ReadBuffer exceeded/.test(error.message)) tooLarge();
      };
      this.#stderr = [];
      transport.stderr?.on('data', (chunk: Buffer) => this.#keepStderr(chunk.toString('utf8')));
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers ?? {} },
      fetch: boundedFetch(maxBytes, tooLarge),
    });
  }

  #keepStderr(text: string): void {
    for (const line of text.split('\n')) if (line.trim()) this.#stderr.push(line.slice(0, 500));
    if (this.#stderr.length > STDERR_LINES) this.#stderr.splice(0, this.#stderr.length - STDERR_LINES);
  }

  #stderrTail(): string {
    const tail = this.#stderr.slice(-3).join(' | ');
    return tail ? ` (its stderr ended with: ${tail})` : '';
  }

  #callError(tool: string, error: unknown, timeoutSeconds: number): SystemError {
    const details = { server: this.name, tool };
    if (this.#oversized) {
      this.#lastError = this.#oversized;
      return new SystemError(
        'mcp_message_too_large',
        `MCP server "${this.name}" ${this.#oversized}.`,
        details,
      );
    }
    const { McpError, ErrorCode } = this.#sdk ?? {};
    if (McpError && ErrorCode && error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      this.#lastError = `did not answer ${tool} within ${timeoutSeconds} s`;
      return new SystemError('mcp_timeout', `MCP server "${this.name}" ${this.#lastError}.`, details);
    }
    if (McpError && ErrorCode && error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      this.#lastError = `exited during the call to ${tool}`;
      return new SystemError(
        'mcp_server_exited',
        `MCP server "${this.name}" ${this.#lastError}${this.#stderrTail()}; it will be started again on next use.`,
        details,
      );
    }
    return new SystemError(
      'mcp_call_failed',
      `MCP server "${this.name}", tool ${tool}: ${errorText(error)}`,
      details,
    );
  }
}

/**
 * `fetch` whose response bodies fail once one message passes `maxBytes`: a JSON body as a whole, an event
 * stream per event (bytes since the last blank line), counted as the chunks arrive.
 */
function boundedFetch(maxBytes: number, onTooLarge: () => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const perEvent = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    let since = 0;
    let previous = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (perEvent) {
            // Bytes since the last "\n\n" (an event's end), across chunk boundaries.
            for (const byte of chunk) {
              since = byte === 10 && previous === 10 ? 0 : since + 1;
              previous = byte;
            }
          } else {
            since += chunk.byteLength;
          }
          if (since > maxBytes) {
            onTooLarge();
            controller.error(new Error(`a message over ${maxBytes} bytes`));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function toToolInfo(tool: {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}): McpToolInfo {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
  };
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
