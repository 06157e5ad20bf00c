import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/errors.ts';
import { formatIssues } from './format-issues.ts';
import { readJsonFile } from './read-json-file.ts';
import { type McpServerConfig, mcpServerNameSchema, mcpServerSchema } from './schema.ts';

/** The fields of a `.mcp.json` server entry Cadre understands; other tools' extra fields are ignored. */
const KNOWN_FIELDS = ['type', 'command', 'args', 'env', 'cwd', 'url', 'headers'];

export interface McpJsonFile {
  path: string;
  /** `mcpServers` as written, for pinning trust. */
  raw: unknown;
}

/** `./.mcp.json` (Claude Code's project file), when there is one. */
export function readMcpJson(cwd: string): McpJsonFile | undefined {
  const path = join(cwd, '.mcp.json');
  if (!existsSync(path)) return undefined;
  const parsed = readJsonFile(path);
  const raw = (parsed as { mcpServers?: unknown } | null)?.mcpServers;
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw)))
    throw new UserError('config_invalid', `${path}: mcpServers: expected an object of servers by name.`, {
      file: path,
    });
  return { path, raw: raw ?? {} };
}

/**
 * The servers of a `.mcp.json`, validated, with `${VAR}` and `${VAR:-default}` expanded from the
 * environment as Claude Code does. Entries Cadre cannot use (`type: "sse"`) are skipped with a warning.
 */
export function mcpJsonServers(
  file: McpJsonFile,
  env: Record<string, string | undefined>,
): { servers: Record<string, McpServerConfig>; warnings: string[] } {
  const servers: Record<string, McpServerConfig> = {};
  const warnings: string[] = [];
  for (const [name, entry] of Object.entries(file.raw as Record<string, unknown>)) {
    const where = `${file.path}: mcpServers.${name}`;
    if (!mcpServerNameSchema.safeParse(name).success)
      throw new UserError(
        'config_invalid',
        `${where}: a server name of letters, digits, "_" or "-" (at most 32)`,
        {
          file: file.path,
        },
      );
    const fields = Object.fromEntries(
      Object.entries((entry ?? {}) as Record<string, unknown>).filter(([key]) => KNOWN_FIELDS.includes(key)),
    );
    if (fields.type === 'sse') {
      warnings.push(
        `${where}: skipped: the SSE transport is deprecated in MCP; Cadre speaks Streamable HTTP`,
      );
      continue;
    }
    const parsed = mcpServerSchema.safeParse(expandVariables(fields, env));
    if (!parsed.success)
      throw new UserError('config_invalid', `${where}: ${formatIssues(parsed.error.issues)}`, {
        file: file.path,
      });
    servers[name] = parsed.data;
  }
  return { servers, warnings };
}

/** Expands `${VAR}` and `${VAR:-default}` in every string of a JSON value. */
export function expandVariables<T>(value: T, env: Record<string, string | undefined>): T {
  if (typeof value === 'string')
    return value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_match, name: string, fallback?: string) => env[name] ?? fallback ?? '',
    ) as T;
  if (Array.isArray(value)) return value.map((item) => expandVariables(item, env)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandVariables(item, env)]),
    ) as T;
  return value;
}
