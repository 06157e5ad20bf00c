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

/** The rule for one call: deny, then ask, then allow entries, then the defaults. */
export function approvalRuleFor(
  rules: ApprovalRules,
  call: { tool: string; input: unknown; toolAsks: boolean; agentAsks: boolean },
): RuleDecision {
  const subject = callSubject(call.input);
  const denied = rules.deny.find((entry) => matches(entry, call.tool, subject, 'any-part'));
  if (denied) return { rule: 'deny', because: `deny rule "${denied}"` };
  const asked = rules.ask.find((entry) => matches(entry, call.tool, subject, 'any-part'));
  if (asked) return { rule: 'ask', because: `ask rule "${asked}"` };
  if (call.agentAsks) return { rule: 'ask', because: "the agent definition's approval list" };
  const allowed = rules.allow.find((entry) => matches(entry, call.tool, subject, 'whole'));
  if (allowed) return { rule: 'allow', because: `allow rule "${allowed}"` };
  if (call.toolAsks) return { rule: 'ask', because: `${call.tool} asks by default` };
  return { rule: 'allow', because: 'no rule asks for it' };
}

/** Checks an entry's syntax; returns what is wrong, or undefined. */
export function ruleEntryProblem(entry: string): string | undefined {
  const parsed = parseEntry(entry);
  if (!parsed) return 'a tool name, a name pattern with *, or tool(subject), e.g. "bash(npm test:*)"';
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
