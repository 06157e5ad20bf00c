import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Cadre } from '../../app/create-cadre.ts';
import { createAgentMcpServer } from './agent-server.ts';

export interface StdioOptions {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  /** Where diagnostics go: never stdout, which carries only the protocol. */
  log: (line: string) => void;
}

/**
 * Serves Cadre's agents over MCP on stdin/stdout for one user, until the client closes stdin (as Claude
 * Desktop, Claude Code and the Inspector do when they are done). Runs still going then are cancelled, and
 * this resolves once they are stored as such.
 */
export async function serveStdio(cadre: Cadre, userId: string, options: StdioOptions): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  const server = createAgentMcpServer(cadre, userId, { inFlight });
  const transport = new StdioServerTransport(options.stdin as never, options.stdout as never);
  server.onerror = (error) => options.log(`cadre mcp: ${error.message}`);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(transport);
  const end = () => void server.close();
  options.stdin.once('end', end);
  options.stdin.once('close', end);
  await closed;
  options.stdin.off('end', end);
  options.stdin.off('close', end);
  // Closing aborted the calls still running; wait for their trees to end (as cancelled) and be stored.
  await Promise.allSettled([...inFlight]);
}
