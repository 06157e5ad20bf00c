import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatIssues } from '../config/format-issues.ts';
import { type AgentDefinition, agentDefinitionSchema } from '../core/agent-definition.ts';
import { UserError } from '../core/errors.ts';
import { mapClaudeCodeAgent } from './claude-code.ts';
import { type FrontMatterDocument, parseFrontMatter } from './frontmatter.ts';

/** Where a definition came from, in override order: later sources replace earlier ones by name. */
export type AgentSourceKind = 'builtin' | 'user' | 'project' | 'claude';

export interface LoadedAgent {
  definition: AgentDefinition;
  source: { kind: AgentSourceKind; path: string };
  /** Things worth knowing that are not errors (mapped or dropped Claude Code fields and tools). */
  notes: string[];
  /** The definition this one replaced, if any. */
  overrides?: { kind: AgentSourceKind; path: string };
}

export interface AgentLoadProblem {
  path: string;
  message: string;
}

export interface AgentCatalog {
  agents: Map<string, LoadedAgent>;
  problems: AgentLoadProblem[];
}

export const BUILTIN_AGENT_DIR = fileURLToPath(new URL('.', import.meta.url));

/** Checks tool names against what exists: registry tools and agent names. */
export type ToolNameCheck = (name: string) => boolean;

/**
 * Largest definition file read, in bytes, unless config `limits.maxDefinitionBytes` says otherwise. Its body
 * is the agent's system prompt, sent with every model call, and a project's own files are a stranger's
 * words: 256 KiB is about 64,000 tokens, far above any real one (the built-ins are 1-3 KB).
 */
export const DEFAULT_MAX_DEFINITION_BYTES = 256 * 1024;

/** A definition file's text, refused unread when it is larger than `maxBytes`. */
function readDefinition(path: string, maxBytes: number): string {
  const { size } = statSync(path);
  if (size > maxBytes) {
    throw new RangeError(
      `${size} bytes, more than the ${maxBytes} a definition may have (config limits.maxDefinitionBytes)`,
    );
  }
  return readFileSync(path, 'utf8');
}

/**
 * Reads and validates one definition file. Throws a UserError naming the file and the field for a bad
 * value or an unknown tool (Claude Code files report unknown tools as notes instead).
 */
export function loadAgentFile(
  path: string,
  kind: AgentSourceKind,
  toolExists?: ToolNameCheck,
  maxBytes = DEFAULT_MAX_DEFINITION_BYTES,
): LoadedAgent {
  return validateAgentDocument(path, kind, readAgentDocument(path, maxBytes), toolExists);
}

const invalid = (path: string, message: string) =>
  new UserError('agent_invalid', `${path}: ${message}`, { file: path });

/** A definition file read and split into front matter and body, or a UserError naming the file. */
function readAgentDocument(path: string, maxBytes: number): FrontMatterDocument {
  try {
    return parseFrontMatter(readDefinition(path, maxBytes));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw invalid(path, 'no such file');
    if (code === 'EISDIR') throw invalid(path, 'a folder, not a definition file; name the .md files in it');
    throw invalid(path, (error as Error).message);
  }
}

/** Validates a definition file's front matter and body (see `loadAgentFile`). */
function validateAgentDocument(
  path: string,
  kind: AgentSourceKind,
  document: FrontMatterDocument,
  toolExists?: ToolNameCheck,
): LoadedAgent {
  const fail = (message: string) => invalid(path, message);
  let attributes = document.attributes;
  const notes: string[] = [];
  if (kind === 'claude') {
    const mapped = mapClaudeCodeAgent(attributes);
    attributes = mapped.attributes;
    notes.push(...mapped.notes);
    if (attributes.tools === undefined) {
      notes.push(
        'no tools listed: Claude Code would give it every tool; Cadre gives it none until they are listed',
      );
    }
  }
  if (attributes.name === undefined) attributes = { ...attributes, name: basename(path, '.md') };
  if ('instructions' in attributes)
    throw fail('instructions: write them as the Markdown body, not a front matter field');
  const parsed = agentDefinitionSchema.safeParse({ ...attributes, instructions: document.body });
  if (!parsed.success) throw fail(formatIssues(parsed.error.issues));
  const definition = parsed.data;
  if (toolExists) {
    const unknown = definition.tools.filter((name) => !toolExists(name));
    if (unknown.length && kind === 'claude') {
      for (const name of unknown) notes.push(`tool "${name}" does not exist in Cadre and was left out`);
      definition.tools = definition.tools.filter((name) => toolExists(name));
    } else if (unknown.length) {
      throw fail(
        `tools: unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}`,
      );
    }
  }
  return { definition, source: { kind, path }, notes };
}

export interface CatalogSources {
  cadreHome: string;
  cwd: string;
  /** Defaults to the built-in definitions shipped in src/agents. */
  builtinDir?: string;
  toolExists?: ToolNameCheck;
  /**
   * Largest definition file read (default DEFAULT_MAX_DEFINITION_BYTES); a larger one is a problem. The
   * built-in definitions are not held to it.
   */
  maxDefinitionBytes?: number;
}

/** The folders definitions are read from, in override order. */
export function agentSourceDirs(sources: CatalogSources): Array<{ kind: AgentSourceKind; dir: string }> {
  return [
    { kind: 'builtin', dir: sources.builtinDir ?? BUILTIN_AGENT_DIR },
    { kind: 'user', dir: join(sources.cadreHome, 'agents') },
    { kind: 'project', dir: join(sources.cwd, '.cadre', 'agents') },
    { kind: 'claude', dir: join(sources.cwd, '.claude', 'agents') },
  ];
}

/**
 * Loads every definition from built-ins, `$CADRE_HOME/agents/`, `./.cadre/agents/` and
 * `./.claude/agents/`. A bad file is reported as a problem and skipped; the others still load. Tool names
 * are checked against registry tools and every agent name found in any source.
 */
export function loadAgentCatalog(sources: CatalogSources): AgentCatalog {
  const files = agentSourceDirs(sources).flatMap(({ kind, dir }) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((name) => name.endsWith('.md'))
          .sort()
          .map((name) => ({ kind, path: join(dir, name) }))
      : [],
  );
  const maxBytes = sources.maxDefinitionBytes ?? DEFAULT_MAX_DEFINITION_BYTES;
  // Each file is read and parsed once: its name is needed before any is validated (an agent may name
  // another as a tool), and YAML parsing is most of a cold start's time here.
  const read = files.map(
    (file): { kind: AgentSourceKind; path: string; document?: FrontMatterDocument; error?: Error } => {
      // The built-ins are Cadre's own: a tight limit meant for others' files never takes them away.
      const limit = file.kind === 'builtin' ? Number.POSITIVE_INFINITY : maxBytes;
      try {
        return { ...file, document: readAgentDocument(file.path, limit) };
      } catch (error) {
        return { ...file, error: error as Error };
      }
    },
  );
  const agentNames = new Set(
    read.map(({ path, document }) => {
      const name = document?.attributes.name;
      return typeof name === 'string' ? name : basename(path, '.md');
    }),
  );
  const toolExists: ToolNameCheck | undefined = sources.toolExists
    ? (name) => agentNames.has(name) || sources.toolExists!(name)
    : undefined;
  const agents = new Map<string, LoadedAgent>();
  const problems: AgentLoadProblem[] = [];
  for (const file of read) {
    try {
      if (!file.document) throw file.error ?? new Error('not read');
      const loaded = validateAgentDocument(file.path, file.kind, file.document, toolExists);
      const previous = agents.get(loaded.definition.name);
      if (previous) loaded.overrides = previous.source;
      agents.set(loaded.definition.name, loaded);
    } catch (error) {
      problems.push({ path: file.path, message: (error as Error).message });
    }
  }
  return { agents, problems };
}
