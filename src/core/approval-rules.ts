/**
 * Which tool calls need a person's approval: rules in the shape Claude Code's permission rules take.
 * An entry is a tool name (`web_fetch`), a name pattern (`mcp__github__*`) or a tool with a subject
 * (`bash(npm test)`, `bash(npm run:*)` for a prefix, `write_file(src/*)`); the subject is the call's
 * command, path or URL. Any matching `deny` wins, then `ask`, then `allow`; with no match the tool's and
 * the agent definition's defaults decide.
 */
export interface ApprovalRules {
  allow: string[];
  ask: string[];
  deny: string[];
}

export type ApprovalRule = 'allow' | 'ask' | 'deny';

export interface RuleDecision {
  rule: ApprovalRule;
  /** What decided it: the matching entry, or the default that applied. */
  because: string;
}

export const NO_RULES: ApprovalRules = { allow: [], ask: [], deny: [] };

/**
 * The rule for one call: deny, then ask, then allow entries, then the defaults. A path is matched as the
 * tool resolved it (`resolvedPath`: workspace-relative, through symlinks), never as the model spelled it:
 * `src/../package.json` is `package.json` to the file system, so `write_file(src/*)` must not allow it.
 * Deny and ask entries see both spellings; a path with a `..` part, an absolute one, or one the tool could
 * not resolve is always asked about.
 */
export function approvalRuleFor(
  rules: ApprovalRules,
  call: {
    tool: string;
    input: unknown;
    toolAsks: boolean;
    agentAsks: boolean;
    /** The call's path as the tool resolved it, or `null` when it could not (outside, unreadable). */
    resolvedPath?: string | null;
  },
): RuleDecision {
  const raw = callSubject(call.input);
  const isPath = rawPath(call.input) !== undefined;
  const resolved = isPath
    ? call.resolvedPath === undefined
      ? normalizedPath(raw ?? '')
      : call.resolvedPath
    : raw;
  const spellings = [...new Set([raw, resolved ?? undefined])];
  const matchesAny = (entry: string) =>
    spellings.some((subject) => matches(entry, call.tool, subject, 'any-part'));
  const denied = rules.deny.find(matchesAny);
  if (denied) return { rule: 'deny', because: `deny rule "${denied}"` };
  const asked = rules.ask.find(matchesAny);
  if (asked) return { rule: 'ask', because: `ask rule "${asked}"` };
  if (call.agentAsks) return { rule: 'ask', because: "the agent definition's approval list" };
  const subject = resolved ?? undefined;
  const allowed = rules.allow.find((entry) => matches(entry, call.tool, subject, 'whole'));
  if (allowed) {
    // An allow rule vouches for the paths it names; a spelling that hides where a path goes is asked.
    const why = isPath ? uncertainPath(raw ?? '', resolved) : undefined;
    if (why) return { rule: 'ask', because: `${why} (allow rule "${allowed}" not applied)` };
    return { rule: 'allow', because: `allow rule "${allowed}"` };
  }
  if (call.toolAsks) return { rule: 'ask', because: `${call.tool} asks by default` };
  return { rule: 'allow', because: 'no rule asks for it' };
}

/** Checks an entry's syntax; returns what is wrong, or undefined. */
export function ruleEntryProblem(entry: string): string | undefined {
  const parsed = parseEntry(entry);
  if (!parsed) return 'a tool name, a name pattern with *, or tool(subject), e.g. "bash(npm test:*)"';
  return undefined;
}

/** The `path` of a call's input, when it has one. */
function rawPath(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const record = input as Record<string, unknown>;
  // A command is the subject when there is one (see callSubject).
  return typeof record.command !== 'string' && typeof record.path === 'string' ? record.path : undefined;
}

/**
 * `./src//a.ts` → `src/a.ts`, `src/../x` → `x`: the path as written, resolved without the file system
 * (for a tool that does not resolve its own); a path that climbs above its start keeps its leading `..`.
 */
function normalizedPath(path: string): string {
  const spelled = path.trim().replace(/\\/g, '/');
  const parts: string[] = [];
  for (const part of spelled.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length && parts.at(-1) !== '..') parts.pop();
    else parts.push(part);
  }
  return (spelled.startsWith('/') ? '/' : '') + parts.join('/');
}

/** Why a path must be asked about whatever the allow rules say, or undefined. */
function uncertainPath(raw: string, resolved: string | null | undefined): string | undefined {
  if (resolved === null) return 'the path could not be resolved inside the workspace';
  const spelled = raw.trim().replace(/\\/g, '/');
  if (spelled.split('/').includes('..')) return 'the path has a ".." part';
  if (spelled.startsWith('/') || spelled.startsWith('~') || /^[a-zA-Z]:/.test(spelled))
    return 'the path is absolute';
  return undefined;
}

/** The part of a call a `tool(subject)` entry is matched against: a command, a path or a URL. */
function callSubject(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const record = input as Record<string, unknown>;
  for (const key of ['command', 'path', 'url']) {
    if (typeof record[key] === 'string') return (record[key] as string).trim();
  }
  return undefined;
}

function parseEntry(entry: string): { tool: string; subject?: string } | undefined {
  const match = /^([a-zA-Z0-9_*-]+)(?:\((.*)\))?$/s.exec(entry.trim());
  if (!match?.[1]) return undefined;
  return match[2] === undefined ? { tool: match[1] } : { tool: match[1], subject: match[2] };
}

/**
 * Shell operators that chain or redirect: an allow entry for `npm test` must not let
 * `npm test && curl … | sh` through, so a command holding any of these never matches an allow subject.
 */
const SHELL_OPERATORS = /[;&|`<>\n]|\$\(/;

function matches(
  entry: string,
  tool: string,
  subject: string | undefined,
  mode: 'whole' | 'any-part',
): boolean {
  const parsed = parseEntry(entry);
  if (!parsed || !globMatch(parsed.tool, tool)) return false;
  if (parsed.subject === undefined) return true;
  if (subject === undefined) return false;
  if (mode === 'whole') return !SHELL_OPERATORS.test(subject) && subjectMatch(parsed.subject, subject);
  // deny and ask look at every part of a chained command: `ls; rm -rf x` is caught by `bash(rm:*)`.
  const parts = subject.split(/&&|\|\||[;|&\n]/).map((part) => part.trim());
  return [subject, ...parts].some((part) => subjectMatch(parsed.subject as string, part));
}

function subjectMatch(pattern: string, subject: string): boolean {
  if (pattern.endsWith(':*')) {
    return subject.startsWith(pattern.slice(0, -2));
  }
  return globMatch(pattern, subject);
}

function globMatch(pattern: string, value: string): boolean {
  if (!pattern.includes('*')) return pattern === value;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(value);
}
