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
 * What a tool read its call's subject to be, for the rules: a path where it really goes (workspace-relative,
 * through symlinks), or every simple command of a shell line with its program's name (`/bin/rm` → `rm`);
 * and why no allow entry may vouch for it (a `..` in a path, a substitution or wrapper in a command).
 */
export interface ResolvedSubject {
  subjects: string[];
  uncertain?: string;
  /**
   * Why some program the call runs cannot be named (a variable in command position, a script file):
   * then no deny or ask entry can be shown not to apply, and the call is asked about whatever allows.
   */
  hidden?: string;
}

/**
 * The rule for one call: deny, then ask, then allow entries, then the defaults. Deny and ask entries see
 * the subject as the model wrote it and as the tool resolved it (`src/../.git/x` is `.git/x`; `env rm x`
 * and `bash -c 'rm x'` hold `rm x`). An allow entry applies only when it names every resolved subject and
 * nothing makes the call uncertain; a subject that could not be resolved (`resolved: null`) asks.
 */
export function approvalRuleFor(
  rules: ApprovalRules,
  call: {
    tool: string;
    input: unknown;
    toolAsks: boolean;
    agentAsks: boolean;
    resolved?: ResolvedSubject | null;
  },
): RuleDecision {
  const raw = callSubject(call.input);
  const isPath = rawPath(call.input) !== undefined;
  let subjects: string[] = raw === undefined ? [] : [raw];
  let uncertain: string | undefined;
  let hidden: string | undefined;
  if (call.resolved === null) uncertain = 'its subject could not be resolved';
  else if (call.resolved) ({ subjects, uncertain, hidden } = call.resolved);
  else if (isPath) subjects = [normalizedPath(raw ?? '')];
  if (isPath) uncertain ??= uncertainPath(raw ?? '');
  const spellings = [...new Set([raw, ...subjects])];
  const matchesAny = (entry: string) =>
    spellings.some((subject) => matches(entry, call.tool, subject, 'any-part'));
  const denied = rules.deny.find(matchesAny);
  if (denied) return { rule: 'deny', because: `deny rule "${denied}"` };
  const asked = rules.ask.find(matchesAny);
  if (asked) return { rule: 'ask', because: `ask rule "${asked}"` };
  // Deny and ask entries hold whatever allows: a program they cannot see may be one they name.
  const guarding = [...rules.deny, ...rules.ask].find((entry) => {
    const parsed = parseEntry(entry);
    return parsed?.subject !== undefined && globMatch(parsed.tool, call.tool);
  });
  if (hidden && guarding)
    return { rule: 'ask', because: `${hidden}, so rule "${guarding}" cannot be ruled out` };
  if (call.agentAsks) return { rule: 'ask', because: "the agent definition's approval list" };
  // An entry with a subject vouches only for what it names: never a line that chains or redirects, nor
  // one whose commands or path are uncertain. A bare tool name allows the tool whatever its input.
  const chained = isCommand(call.input) && raw !== undefined && SHELL_OPERATORS.test(raw);
  const vouches = (entry: string, subject: string | undefined) =>
    matches(entry, call.tool, subject, 'whole') &&
    (parseEntry(entry)?.subject === undefined || (!chained && !uncertain));
  const bare = rules.allow.find(
    (entry) => parseEntry(entry)?.subject === undefined && matches(entry, call.tool, undefined, 'whole'),
  );
  if (bare) return { rule: 'allow', because: `allow rule "${bare}"` };
  const named = subjects.length
    ? rules.allow.find((entry) => matches(entry, call.tool, subjects[0], 'whole'))
    : undefined;
  if (named) {
    if (subjects.every((subject) => rules.allow.some((entry) => vouches(entry, subject))))
      return { rule: 'allow', because: `allow rule "${named}"` };
    const why = chained
      ? 'the command chains or redirects'
      : (uncertain ?? 'not every command it runs is allowed');
    return { rule: 'ask', because: `${why} (allow rule "${named}" not applied)` };
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

function isCommand(input: unknown): boolean {
  return typeof (input as { command?: unknown } | undefined)?.command === 'string';
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
function uncertainPath(raw: string): string | undefined {
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
