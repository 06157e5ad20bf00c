import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { type FolderTrust, folderTrust, type ProjectRequests } from './folder-trust.ts';
import { formatIssues } from './format-issues.ts';
import { mcpJsonServers, readMcpJson } from './mcp-json.ts';
import { readJsonFile } from './read-json-file.ts';
import { type CadreConfig, configSchema } from './schema.ts';

export interface ConfigSources {
  env: Record<string, string | undefined>;
  cwd: string;
  /** `--config FILE` */
  configFile?: string;
  /** Command-line flags, already in config shape. */
  flags?: CadreConfig;
}

export interface LoadedConfig {
  config: CadreConfig;
  home: string;
  /** Files that were read, in order. */
  files: string[];
  /** Settings that were read but not applied, and why. */
  warnings: string[];
  /** What the folder Cadre runs in asks to start or reach, and whether the person trusts it to. */
  project: ProjectRequests & { folder: string; trust: FolderTrust | 'nothing-asked'; refused: string[] };
}

/** `$CADRE_HOME`, or `~/.cadre`. */
export function cadreHome(env: Record<string, string | undefined>): string {
  return resolve(env.CADRE_HOME || join(homedir(), '.cadre'));
}

/**
 * Reads configuration in order, later wins: built-in defaults, `$CADRE_HOME/config.json`,
 * `./.cadre/config.json`, `--config FILE`, environment variables, flags. A bad file or value is an error
 * naming the file, the field and what was expected.
 */
export function loadConfig(sources: ConfigSources): LoadedConfig {
  const home = cadreHome(sources.env);
  const files: string[] = [];
  const warnings: string[] = [];
  let config: CadreConfig = {};
  const userFile = join(home, 'config.json');
  const projectFile = join(sources.cwd, '.cadre', 'config.json');
  if (existsSync(userFile)) {
    config = mergeConfig(config, readConfigFile(userFile, warnings));
    files.push(userFile);
  }
  // Run from the home folder itself, the "project" file is the user's own: read once, as the user's.
  const projectLayer =
    projectFile !== userFile && existsSync(projectFile) ? readConfigFile(projectFile, warnings) : undefined;
  const mcpJson = readMcpJson(sources.cwd);
  const project = projectRequests(sources.cwd, home, projectLayer, mcpJson?.raw);
  if (mcpJson) {
    if (project.trust === 'trusted') {
      const read = mcpJsonServers(mcpJson, sources.env);
      warnings.push(...read.warnings);
      config = mergeConfig(config, { mcpServers: read.servers });
      files.push(mcpJson.path);
    } else {
      const names = Object.keys(mcpJson.raw as object);
      project.refused.push(...names.map((name) => `${name} (${mcpJson.path})`));
      if (names.length)
        warnings.push(untrustedWarning(mcpJson.path, `MCP servers ${names.join(', ')}`, project));
    }
  }
  if (projectLayer) {
    warnings.push(...withoutTrustedEndpoint(projectLayer, projectFile));
    warnings.push(...withoutOperatorSettings(projectLayer, projectFile));
    warnings.push(...projectApprovals(projectLayer, config, projectFile));
    if (project.trust !== 'trusted') warnings.push(...withoutCommands(projectLayer, projectFile, project));
    config = mergeConfig(config, projectLayer);
    files.push(projectFile);
  }
  if (sources.configFile) {
    const file = resolve(sources.cwd, sources.configFile);
    if (!existsSync(file))
      throw new UserError('config_missing', `--config ${sources.configFile}: no such file (${file}).`);
    config = mergeConfig(config, readConfigFile(file, warnings));
    files.push(file);
  }
  config = mergeConfig(config, fromEnvironment(sources.env));
  if (sources.flags) config = mergeConfig(config, validate(sources.flags, 'command-line flags'));
  checkPrefetch(config, files);
  return { config, home, files, warnings, project };
}

function projectRequests(
  folder: string,
  home: string,
  layer: CadreConfig | undefined,
  mcpJson: unknown,
): LoadedConfig['project'] {
  const requests: ProjectRequests = {
    ...(mcpJson !== undefined ? { mcpJson } : {}),
    ...(layer?.mcpServers ? { configServers: layer.mcpServers } : {}),
    ...(lspServersOf(layer) !== undefined ? { lspServers: lspServersOf(layer) } : {}),
  };
  const asks = Object.keys(requests).length > 0;
  return {
    ...requests,
    folder,
    trust: asks ? folderTrust(home, folder, requests) : 'nothing-asked',
    refused: [],
  };
}

function lspServersOf(layer: CadreConfig | undefined): unknown {
  return layer?.tools?.lsp?.servers;
}

function untrustedWarning(file: string, what: string, project: LoadedConfig['project']): string {
  const why =
    project.trust === 'changed'
      ? 'they changed since you trusted this folder'
      : "a project's own files may not name commands or servers until you trust the folder";
  return `${file}: ${what} ignored: ${why}; run "cadre mcp trust" in ${project.folder} to allow them (or put them in $CADRE_HOME/config.json)`;
}

/**
 * A project's own config comes with the folder Cadre runs in, which may be a stranger's repository: until
 * the person trusts the folder (`cadre mcp trust`), it may not name commands for Cadre to start (language
 * servers, MCP servers) or MCP servers to send data to. Those belong in `$CADRE_HOME/config.json`, a file
 * passed with `--config`, or a trusted folder.
 */
function withoutCommands(layer: CadreConfig, file: string, project: LoadedConfig['project']): string[] {
  const warnings: string[] = [];
  if (layer.tools?.lsp?.servers?.length) {
    delete layer.tools.lsp.servers;
    warnings.push(untrustedWarning(file, 'tools.lsp.servers', project));
  }
  if (layer.mcpServers) {
    const names = Object.keys(layer.mcpServers);
    delete layer.mcpServers;
    project.refused.push(...names.map((name) => `${name} (${file})`));
    if (names.length) warnings.push(untrustedWarning(file, `mcpServers ${names.join(', ')}`, project));
  }
  return warnings;
}

/**
 * A configured search endpoint is trusted even on a private address, and the database receives every
 * conversation and document: only the person may choose either, never a folder Cadre happens to run in.
 */
function withoutTrustedEndpoint(layer: CadreConfig, file: string): string[] {
  const warnings: string[] = [];
  if (layer.tools?.searchEndpoint) {
    delete layer.tools.searchEndpoint;
    warnings.push(
      `${file}: tools.searchEndpoint ignored: a project's config may not choose a trusted endpoint; ` +
        'put it in $CADRE_HOME/config.json or pass the file with --config',
    );
  }
  if (layer.database) {
    delete layer.database;
    warnings.push(
      `${file}: database ignored: a project's config may not choose where Cadre stores your data; ` +
        'set CADRE_DATABASE_URL, put it in $CADRE_HOME/config.json or pass the file with --config',
    );
  }
  return warnings;
}

/**
 * What a shared server's users may do (`multiUser`: their coding tools, their sandbox's hosts and
 * environment), what runs cost (`pricing`), whether the process exposes `/metrics`, and whose addresses and origins the server believes
 * (`server.trustedProxies`, `allowedHosts`, `allowedOrigins`) are the operator's to say: a folder Cadre runs
 * in may not, trusted or not.
 */
function withoutOperatorSettings(layer: CadreConfig, file: string): string[] {
  const ignored: string[] = [];
  if (layer.multiUser) {
    delete layer.multiUser;
    ignored.push('multiUser');
  }
  if (layer.pricing) {
    delete layer.pricing;
    ignored.push('pricing');
  }
  if (layer.metrics !== undefined) {
    delete layer.metrics;
    ignored.push('metrics');
  }
  for (const key of ['trustedProxies', 'allowedHosts', 'allowedOrigins'] as const) {
    if (layer.server?.[key]) {
      delete layer.server[key];
      ignored.push(`server.${key}`);
    }
  }
  return ignored.map(
    (what) =>
      `${file}: ${what} ignored: a project's config may not change it; put it in $CADRE_HOME/config.json or pass the file with --config`,
  );
}

/**
 * A project's own config may make Cadre ask or refuse more, never less: its `allow` entries are ignored
 * (a cloned repository must not approve its own `bash` calls), and its `ask`/`deny` entries add to the
 * person's instead of replacing them.
 */
function projectApprovals(layer: CadreConfig, base: CadreConfig, file: string): string[] {
  const approvals = layer.approvals;
  if (!approvals) return [];
  const warnings: string[] = [];
  if (approvals.allow?.length) {
    warnings.push(
      `${file}: approvals.allow ignored: a project's config may ask for approval, not waive it; ` +
        'put allow rules in $CADRE_HOME/config.json or pass the file with --config',
    );
  }
  delete approvals.allow;
  if (approvals.timeoutSeconds !== undefined) delete approvals.timeoutSeconds;
  if (approvals.ask) approvals.ask = [...(base.approvals?.ask ?? []), ...approvals.ask];
  if (approvals.deny) approvals.deny = [...(base.approvals?.deny ?? []), ...approvals.deny];
  return warnings;
}

function readConfigFile(file: string, warnings: string[]): CadreConfig {
  return validate(renamedFields(readJsonFile(file), file, warnings), file);
}

/**
 * Names that changed, read as the new ones with a warning naming the file, so an older config still loads:
 * `delegation.mode: "on-demand"` is `"delegate"`, the name the HTTP API and the web app use.
 */
function renamedFields(raw: unknown, file: string, warnings: string[]): unknown {
  const delegation = isPlainObject(raw) ? raw.delegation : undefined;
  if (!isPlainObject(delegation) || delegation.mode !== 'on-demand') return raw;
  warnings.push(`${file}: delegation.mode "on-demand" is now called "delegate"; read as "delegate"`);
  return { ...(raw as object), delegation: { ...delegation, mode: 'delegate' } };
}

/** Prefetch mode with nothing to prefetch would quietly answer without it: an error naming the field. */
function checkPrefetch(config: CadreConfig, files: string[]): void {
  if (config.delegation?.mode !== 'prefetch' || config.delegation.prefetch) return;
  const where = files.length ? files.join(', ') : 'configuration';
  throw new UserError(
    'config_invalid',
    `${where}: delegation.prefetch: prefetch mode needs {"agent": NAME, "trigger": REGEX} (e.g. {"agent": "research", "trigger": "."}), or choose another delegation.mode`,
    { file: where },
  );
}

function fromEnvironment(env: Record<string, string | undefined>): CadreConfig {
  const fromEnv: Record<string, unknown> = {};
  if (env.CADRE_MODEL) fromEnv.model = env.CADRE_MODEL;
  if (env.CADRE_SUBAGENT_MODEL) fromEnv.subagentModel = env.CADRE_SUBAGENT_MODEL;
  if (env.CADRE_DATABASE_URL) fromEnv.database = { url: env.CADRE_DATABASE_URL };
  return validate(fromEnv, 'environment (CADRE_MODEL / CADRE_SUBAGENT_MODEL / CADRE_DATABASE_URL)');
}

/** Validates a config object, naming `where` and each bad field in the error. */
export function validate(raw: unknown, where: string): CadreConfig {
  const parsed = configSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new UserError('config_invalid', `${where}: ${formatIssues(parsed.error.issues)}`, { file: where });
}

/** Deep merge of plain objects; arrays and scalars from `over` replace those in `base`. */
export function mergeConfig<T extends object>(base: T, over: T): T {
  const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? mergeConfig(current, value) : value;
  }
  return merged as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
