import type { Migration } from '../../sql/migrations.ts';

/**
 * Finished sub-agent results kept per session for reuse by later questions (seed 000's cached last
 * result). One row per person, session and request; a newer result of the same request replaces it.
 * Rows go with their session.
 */
export const resultMemoryMigration: Migration = {
  id: '007-subagent-results',
  sql: `
    CREATE TABLE subagent_results (
      user_id TEXT NOT NULL,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      agent TEXT NOT NULL,
      model TEXT NOT NULL,
      input TEXT NOT NULL,
      envelope TEXT NOT NULL,
      finished_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, session_id, agent, model, input)
    );
  `,
};
