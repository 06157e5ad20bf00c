import { z } from 'zod';

/** How a configured MCP server is written in `mcpServers` (the config schema uses this shape). */

/** Server names become part of tool names (`mcp__<server>__<tool>`), which providers limit to these. */
export const mcpServerNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,32}$/, 'a server name of letters, digits, "_" or "-" (at most 32)');

const mcpCommon = {
  /** Seconds to wait for the server to start and list its tools (default 30). */
  startTimeout: z.number().positive().optional(),
  /** Seconds one tool call may take (default 120). */
  callTimeout: z.number().positive().optional(),
  disabled: z.boolean().optional(),
  /** Tools of this server offered to models (default 64); the rest are left out. */
  maxTools: z.number().int().positive().optional(),
  /** Largest message the server may send, in bytes (default 4 MiB); a larger one ends its connection. */
  maxMessageBytes: z.number().int().positive().optional(),
};

/**
 * One MCP server, in the shape Claude Desktop and Claude Code use: a command to start (stdio) or a URL
 * (Streamable HTTP). `type` may be left out; it follows from `command` or `url`.
 */
export const mcpServerSchema = z.union(
  [
    z.strictObject({
      type: z.literal('stdio').optional(),
      command: z.string().min(1),
      args: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
      cwd: z.string().optional(),
      ...mcpCommon,
    }),
    z.strictObject({
      type: z.enum(['http', 'streamable-http']).optional(),
      url: z.url({ protocol: /^https?$/ }),
      headers: z.record(z.string(), z.string()).optional(),
      ...mcpCommon,
    }),
  ],
  { error: 'an MCP server: {command, args?, env?} (stdio) or {url, headers?} (Streamable HTTP)' },
);
export type McpServerConfig = z.infer<typeof mcpServerSchema>;
