import { resolve } from 'node:path';
import { Cadre } from '../../app/create-cadre.ts';
import { trustFolderIfValid, untrustFolderOf } from '../../app/project-trust.ts';
import { UserError } from '../../core/index.ts';
import { serveStdio } from '../../mcp/server/stdio.ts';
import type { CliCommand, CliContext } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { printableLine, withoutControls } from '../terminal-text.ts';

export const MCP = {
  usage: [
    'cadre mcp                  serve the agents as MCP tools over stdio',
    'cadre mcp list [--json]    configured MCP servers and their tools',
    "cadre mcp trust [DIR]      let this folder's .mcp.json start its servers",
    'cadre mcp untrust [DIR]',
  ],
  summary:
    "MCP both ways: Cadre's agents as tools for other clients, and other servers' tools for Cadre's agents.",
  flags: {
    json: { type: 'boolean', default: false, description: 'list: print JSON' },
    model: {
      type: 'string',
      placeholder: 'P:M',
      description: 'the main model, as provider:model (over CADRE_MODEL)',
    },
    config: { type: 'string', placeholder: 'FILE', description: 'read this config file too' },
    workspace: {
      type: 'string',
      placeholder: 'DIR',
      description: 'the folder the workspace tools may read (default: the current one)',
    },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre mcp` (serve agents over stdio) · `mcp list` · `mcp trust [DIR]` · `mcp untrust [DIR]` */
export const mcpCommand: CliCommand = async (args, context) => {
  const sub = args[0]?.startsWith('-') ? undefined : args[0];
  const rest = sub === undefined ? args : args.slice(1);
  answerHelp(MCP, args);
  const { values, positionals } = parseCommand(MCP, rest);
  const folder = resolve(context.cwd, positionals[0] ?? '.');
  // Untrusting reads nothing of the folder: its files may be what makes reading them fail.
  if (sub === 'untrust') {
    context.stdout.write(
      untrustFolderOf(context.env, folder)
        ? `No longer trusted: ${folder}\n`
        : `${folder} was not trusted; nothing changed.\n`,
    );
    return EXIT.ok;
  }
  const cadre = await Cadre.create({
    env: context.env,
    cwd: sub === 'trust' ? folder : context.cwd,
    ...(context.store ? { store: context.store } : {}),
    ...(values.model ? { flags: { model: values.model } } : {}),
    ...(values.config ? { configFile: values.config } : {}),
    ...(values.workspace ? { workspace: resolve(context.cwd, values.workspace) } : {}),
  });
  if (sub === undefined || sub === 'serve' || sub === 'list')
    for (const warning of cadre.warnings) context.stderr.write(`cadre mcp: ${withoutControls(warning)}\n`);
  try {
    switch (sub) {
      case undefined:
      case 'serve':
        await serveStdio(cadre, context.userId, {
          stdin: context.stdin ?? process.stdin,
          stdout: context.stdout,
          log: (line) => context.stderr.write(`${line}\n`),
        });
        return EXIT.ok;
      case 'list':
        return await list(cadre, context, values.json);
      case 'trust':
        return trust(cadre, context, folder);
      default:
        throw new UserError(
          'usage',
          `unknown mcp command "${sub}"; use cadre mcp, mcp list, mcp trust [DIR] or mcp untrust [DIR]`,
        );
    }
  } finally {
    await cadre.close();
  }
};

/** Starts every configured server and lists it with its tools, or why it is not available. */
async function list(cadre: Cadre, context: CliContext, json: boolean): Promise<number> {
  await cadre.mcp.startAll();
  const servers = cadre.mcp.servers().map((connection) => ({
    name: connection.name,
    transport: 'command' in connection.config ? 'stdio' : 'http',
    target:
      'command' in connection.config
        ? [connection.config.command, ...(connection.config.args ?? [])].join(' ')
        : connection.config.url,
    state: connection.state,
    ...(connection.lastError ? { error: connection.lastError } : {}),
    tools: cadre.mcp
      .list(`mcp__${connection.name}__`)
      .map((tool) => ({ name: tool.name, description: tool.description })),
  }));
  const refused = cadre.project.refused;
  if (json) {
    context.stdout.write(`${JSON.stringify({ servers, refused, trust: cadre.project.trust }, null, 2)}\n`);
    return EXIT.ok;
  }
  if (!servers.length)
    context.stdout.write('No MCP servers are configured (mcpServers in config.json or .mcp.json).\n');
  // Names, commands and tool descriptions come from a project's files and from the servers themselves:
  // shown without the control sequences they may hold.
  for (const server of servers) {
    context.stdout.write(
      `${printableLine(server.name)}  (${server.transport}) ${printableLine(server.target)}\n`,
    );
    if (server.error) context.stdout.write(`  not available: ${printableLine(server.error)}\n`);
    for (const tool of server.tools)
      context.stdout.write(
        `  ${printableLine(tool.name)}  ${printableLine(tool.description.split('\n')[0]!).slice(0, 100)}\n`,
      );
  }
  if (refused.length) {
    context.stdout.write(
      `\nNot used until you trust this folder ("cadre mcp trust"): ${printableLine(refused.join(', '))}\n`,
    );
  }
  return EXIT.ok;
}

function trust(cadre: Cadre, context: CliContext, folder: string): number {
  const { folder: _folder, trust: state, refused, ...requests } = cadre.project;
  if (state === 'nothing-asked') {
    context.stdout.write(`${folder} names no commands or MCP servers; there is nothing to trust.\n`);
    return EXIT.ok;
  }
  const recorded = trustFolderIfValid(context.env, folder, requests);
  context.stdout.write(`Trusted: ${recorded}\nIts own files may now start:\n`);
  for (const line of describeRequests(requests)) context.stdout.write(`  ${printableLine(line)}\n`);
  context.stdout.write('A change to them will need "cadre mcp trust" again.\n');
  return EXIT.ok;
}

function describeRequests(requests: {
  mcpJson?: unknown;
  configServers?: unknown;
  lspServers?: unknown;
}): string[] {
  const lines: string[] = [];
  for (const servers of [requests.mcpJson, requests.configServers]) {
    for (const [name, server] of Object.entries(
      (servers ?? {}) as Record<string, { command?: string; args?: string[]; url?: string }>,
    )) {
      lines.push(`MCP server ${name}: ${server.url ?? [server.command, ...(server.args ?? [])].join(' ')}`);
    }
  }
  if (requests.lspServers) lines.push(`language servers: ${JSON.stringify(requests.lspServers)}`);
  return lines;
}
