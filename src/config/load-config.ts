import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { UserError } from '../core/errors.ts';
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
  for (const file of [userFile, projectFile]) {
    if (!existsSync(file)) continue;
    const layer = readConfigFile(file);
    if (file === projectFile) warnings.push(...withoutCommands(layer, file));
    config = mergeConfig(config, layer);
    files.push(file);
  }
  if (sources.configFile) {
    const file = resolve(sources.cwd, sources.configFile);
    if (!existsSync(file))
      throw new UserError('config_missing', `--config ${sources.configFile}: no such file (${file}).`);
    config = mergeConfig(config, readConfigFile(file));
    files.push(file);
  }
  config = mergeConfig(config, fromEnvironment(sources.env));
  if (sources.flags) config = mergeConfig(config, validate(sources.flags, 'command-line flags'));
  return { config, home, files, warnings };
}

/**
 * A project's own config comes with the folder Cadre runs in, which may be a stranger's repository: it
 * may not name commands for Cadre to start (language servers), nor a search endpoint (a configured
 * endpoint is trusted even on a private address). Those belong in `$CADRE_HOME/config.json` or a file
 * passed with `--config`.
 */
function withoutCommands(layer: CadreConfig, file: string): string[] {
  const warnings: string[] = [];
  const where = 'put it in $CADRE_HOME/config.json or pass the file with --config';
  if (layer.tools?.lsp?.servers?.length) {
    delete layer.tools.lsp.servers;
    warnings.push(
      `${file}: tools.lsp.servers ignored: a project's config may not name commands to run; ${where}`,
    );
  }
  if (layer.tools?.searchEndpoint) {
    delete layer.tools.searchEndpoint;
    warnings.push(
      `${file}: tools.searchEndpoint ignored: a project's config may not choose a trusted endpoint; ${where}`,
    );
  }
  return warnings;
}

function readConfigFile(file: string): CadreConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UserError('config_invalid', `${file}: not valid JSON (${(error as Error).message}).`, { file });
  }
  return validate(raw, file);
}

function fromEnvironment(env: Record<string, string | undefined>): CadreConfig {
  const fromEnv: Record<string, unknown> = {};
  if (env.CADRE_MODEL) fromEnv.model = env.CADRE_MODEL;
  if (env.CADRE_SUBAGENT_MODEL) fromEnv.subagentModel = env.CADRE_SUBAGENT_MODEL;
  return validate(fromEnv, 'environment (CADRE_MODEL / CADRE_SUBAGENT_MODEL)');
}

/** Validates a config object, naming `where` and each bad field in the error. */
export function validate(raw: unknown, where: string): CadreConfig {
  const parsed = configSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new UserError('config_invalid', `${where}: ${formatIssues(parsed.error.issues)}`, { file: where });
}

/** "field.path: what was expected" for each issue, joined. */
export function formatIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.join('.') : '(top level)';
      const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
      return `${field}: ${issue.message}${keys}`;
    })
    .join('; ');
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
