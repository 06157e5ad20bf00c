// How journal entries and attempts are written as rows, shared by the journal store and the event writer
// (which puts a run's entries in the table with its events).

/** One entry, placed after the journal's last (the store's event writer uses it too). */
export const JOURNAL_INSERT_SQL = `INSERT OR IGNORE INTO journal (journal_id, position, run_key, kind, key, body, payload_hash)
  VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM journal WHERE journal_id = ?), ?, ?, ?, ?, ?)`;

/** One attempt, recorded once (a spool applied twice, or a second `begin`, changes nothing). */
export const ATTEMPT_INSERT_SQL =
  'INSERT OR IGNORE INTO journal_attempts (root_run_id, journal_id, user_id, spec, started_at) VALUES (?, ?, ?, ?, ?)';
