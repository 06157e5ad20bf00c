import { outputJson } from '../../core/output-json.ts';

/**
 * How journal entries and attempts are written as rows, shared by the journal store and the event writer
 * (which puts a run's entries in the table with its events).
 */

/** One entry, placed after the journal's last (the store's event writer uses it too). */
export const JOURNAL_INSERT_SQL = `INSERT OR IGNORE INTO journal (journal_id, position, run_key, kind, key, body, payload_hash)
  VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM journal WHERE journal_id = ?), ?, ?, ?, ?, ?)`;

/** One attempt, recorded once (a spool applied twice, or a second `begin`, changes nothing). */
export const ATTEMPT_INSERT_SQL =
  'INSERT OR IGNORE INTO journal_attempts (root_run_id, journal_id, user_id, spec, started_at) VALUES (?, ?, ?, ?, ?)';

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
