import { outputJson } from '../core/output-json.ts';

/**
 * How a journal entry's body is written, the same for every backend: a successful tool result's output
 * is serialised exactly as its tool-result event's payload is (see payloads.ts), so the two share one
 * stored copy under one hash.
 */
export function entryBody(kind: string, body: unknown): { text: string; output?: string } {
  const output = kind === 'tool-result' && isOutputResult(body) ? resultJson(body.output) : undefined;
  return output === undefined
    ? { text: JSON.stringify(body ?? null) }
    : { text: okResultBody(output), output };
}

/** A successful tool result whose output is an object or a string (what may be large), and nothing else. */
export function isOutputResult(body: unknown): body is { ok: true; output: object | string } {
  if (typeof body !== 'object' || body === null) return false;
  const { ok, output, ...rest } = body as { ok?: unknown; output?: unknown };
  const large = typeof output === 'string' || (typeof output === 'object' && output !== null);
  return ok === true && large && Object.keys(rest).length === 0;
}

/** A successful tool result entry's body around its output's JSON (`output`, see JournalEntry). */
export function okResultBody(output: string): string {
  return `{"ok":true,"output":${output}}`;
}

/** A tool output's JSON, as its tool-result event's payload makes it (the same text, so the same hash). */
export function resultJson(output: object | string): string {
  return typeof output === 'string' ? JSON.stringify(output) : outputJson(output);
}
