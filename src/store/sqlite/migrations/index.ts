import type { Migration } from '../../sql/migrations.ts';
import { documentsMigration, vectorsPerModelMigration } from './documents.ts';
import { httpCacheMigration } from './http-cache.ts';
import { journalMigration, journalPayloadsMigration } from './journal.ts';
import { resultMemoryMigration } from './result-memory.ts';

/**
 * Events get a per-tree cursor (`root_seq`, from 1 with no gaps) so a reader can resume a tree's stream
 * from the last event it saw whatever backend stores it; large outputs are kept once in `payloads` and
 * referenced from the event rows that carry them.
 */
const eventCursorMigration: Migration = {
  id: '008-event-cursor-payloads',
  sql: `
    ALTER TABLE events ADD COLUMN root_seq INTEGER;
    ALTER TABLE events ADD COLUMN payload_hash TEXT;
    UPDATE events SET root_seq = (
      SELECT count(*) FROM events AS earlier
      WHERE earlier.root_id = events.root_id AND earlier.rowid <= events.rowid
    );
    CREATE UNIQUE INDEX events_cursor ON events(root_id, root_seq);
    CREATE INDEX events_payload ON events(payload_hash) WHERE payload_hash IS NOT NULL;
    CREATE INDEX runs_by_user ON runs(user_id, started_at DESC) WHERE parent_id IS NULL;
    CREATE TABLE payloads (
      hash TEXT PRIMARY KEY,
      body TEXT NOT NULL
    );
  `,
};

/** Per-agent settings belong to a user: those saved before users existed are the local user's. */
const agentSettingsPerUserMigration: Migration = {
  id: '009-agent-settings-per-user',
  sql: "UPDATE settings SET scope = 'agent:local' WHERE scope = 'agent';",
};

/**
 * A stop asked of a tree that runs in another process (a page's Stop for an answer a terminal is writing):
 * kept until the process running it reads it, within a fraction of a second.
 */
const runStopRequestsMigration: Migration = {
  id: '013-run-stop-requests',
  sql: `
    CREATE TABLE run_stop_requests (
      root_id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL,
      reason TEXT NOT NULL,
      requested_at INTEGER NOT NULL
    );
  `,
};

/**
 * Full-text search over each user's messages (the chat list's search): an FTS5 index of message text kept
 * by triggers as messages are added and removed (a deleted session's messages go with it), filled from
 * the messages already stored.
 */
const messageSearchMigration: Migration = {
  id: '015-message-search',
  sql: `
    CREATE VIRTUAL TABLE message_search USING fts5(
      user_id UNINDEXED, session_id UNINDEXED, message_id UNINDEXED, content,
      tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO message_search (user_id, session_id, message_id, content)
      SELECT user_id, session_id, id, content FROM messages;
    CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
      INSERT INTO message_search (user_id, session_id, message_id, content)
        VALUES (new.user_id, new.session_id, new.id, new.content);
    END;
    CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
      DELETE FROM message_search
        WHERE user_id = old.user_id AND session_id = old.session_id AND message_id = old.id;
    END;
  `,
};

/**
 * A session is its user's: its key is (user, id), so a chat client's id that another user already has
 * makes a session of the caller's own, and nothing answers differently for an id someone else uses.
 * Messages belong to their session the same way. The tables are rebuilt (SQLite cannot change a primary
 * key): the old ones are renamed first, which carries their foreign keys along, so dropping them takes
 * nothing from the new ones.
 */
const sessionsPerUserMigration: Migration = {
  id: '014-sessions-per-user',
  sql: `
    DROP INDEX sessions_by_user;
    ALTER TABLE subagent_results RENAME TO subagent_results_old;
    ALTER TABLE messages RENAME TO messages_old;
    ALTER TABLE sessions RENAME TO sessions_old;
    CREATE TABLE sessions (
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      id TEXT NOT NULL,
      title TEXT NOT NULL DEFAULT '',
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, id)
    );
    CREATE INDEX sessions_by_user ON sessions(user_id, updated_at DESC);
    CREATE TABLE messages (
      user_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      parts TEXT,
      metadata TEXT,
      run_id TEXT,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, session_id, id),
      UNIQUE (user_id, session_id, seq),
      FOREIGN KEY (user_id, session_id) REFERENCES sessions(user_id, id) ON DELETE CASCADE
    );
    CREATE TABLE subagent_results (
      user_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      agent TEXT NOT NULL,
      model TEXT NOT NULL,
      input TEXT NOT NULL,
      envelope TEXT NOT NULL,
      finished_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, session_id, agent, model, input),
      FOREIGN KEY (user_id, session_id) REFERENCES sessions(user_id, id) ON DELETE CASCADE
    );
    INSERT INTO sessions (user_id, id, title, created_at, updated_at)
      SELECT user_id, id, title, created_at, updated_at FROM sessions_old;
    INSERT INTO messages (user_id, session_id, id, seq, role, content, parts, metadata, run_id, created_at)
      SELECT s.user_id, m.session_id, m.id, m.seq, m.role, m.content, m.parts, m.metadata, m.run_id, m.created_at
      FROM messages_old m JOIN sessions_old s ON s.id = m.session_id;
    INSERT INTO subagent_results SELECT r.* FROM subagent_results_old r
      JOIN sessions_old s ON s.id = r.session_id AND s.user_id = r.user_id;
    DROP TABLE subagent_results_old;
    DROP TABLE messages_old;
    DROP TABLE sessions_old;
  `,
};

/**
 * Earlier versions of a session's answers: the messages a regenerate or an edit replaced, kept as one
 * JSON list after the message they followed (null: the session's start); they go with their session.
 */
const messageVersionsMigration: Migration = {
  id: '016-message-versions',
  sql: `
    CREATE TABLE message_versions (
      user_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      id TEXT NOT NULL,
      after_id TEXT,
      messages TEXT NOT NULL,
      replaced_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, session_id, id),
      FOREIGN KEY (user_id, session_id) REFERENCES sessions(user_id, id) ON DELETE CASCADE
    );
  `,
};

/**
 * Messages a person sent to a running run (`cadre runs say`, the page's card) that the process running it
 * has not taken yet: it takes each once, and the run records it in the tree's journal at the step it joins.
 */
const runMessagesMigration: Migration = {
  id: '017-run-messages',
  sql: `
    CREATE TABLE run_messages (
      id TEXT PRIMARY KEY,
      run_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      text TEXT NOT NULL,
      sent_at INTEGER NOT NULL
    );
    CREATE INDEX run_messages_by_run ON run_messages(run_id, sent_at);
  `,
};

/**
 * Finished runs' conversations (what a run would go on from), kept so a later step, turn or process can
 * continue one (`continue_agent`, a person's follow-up): the JSON of its messages, or none when it was
 * larger than `limits.maxStoredOutputChars` (`chars` says how large). They go with their tree.
 */
const runConversationsMigration: Migration = {
  id: '018-run-conversations',
  sql: `
    CREATE TABLE run_conversations (
      run_id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL,
      conversation TEXT,
      chars INTEGER NOT NULL,
      kept_at INTEGER NOT NULL
    );
  `,
};

/**
 * Schema migrations, applied in order and recorded by id. Append new ones; never edit one that shipped.
 * Documents, the HTTP cache, result memory and the journal have their migrations in their own files
 * here; runs, sessions and settings have theirs in this list.
 */
export const MIGRATIONS: Migration[] = [
  {
    id: '001-users-sessions-runs-events',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT,
        created_at INTEGER NOT NULL
      );
      INSERT INTO users (id, name, created_at) VALUES ('local', 'local', 0);
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX sessions_by_user ON sessions(user_id, updated_at DESC);
      CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        parts TEXT,
        run_id TEXT,
        created_at INTEGER NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        root_id TEXT NOT NULL,
        session_id TEXT,
        user_id TEXT NOT NULL DEFAULT 'local',
        agent TEXT NOT NULL,
        task TEXT NOT NULL,
        model TEXT NOT NULL,
        depth INTEGER NOT NULL,
        status TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        envelope TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX runs_roots ON runs(started_at DESC) WHERE parent_id IS NULL;
      CREATE INDEX runs_by_root ON runs(root_id);
      CREATE TABLE events (
        run_id TEXT NOT NULL,
        root_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        time INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
      CREATE INDEX events_by_root ON events(root_id, time);
      CREATE TABLE settings (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (scope, key)
      );
    `,
  },
  documentsMigration,
  httpCacheMigration,
  {
    // Which process runs a run, so a later start can tell a run still going from one whose process was
    // killed (SIGKILL, a closed terminal) and mark it interrupted.
    id: '005-run-owner',
    sql: `
      ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
      ALTER TABLE runs ADD COLUMN owner_host TEXT;
      CREATE INDEX runs_running ON runs(status) WHERE status = 'running';
    `,
  },
  {
    id: '006-message-metadata',
    sql: 'ALTER TABLE messages ADD COLUMN metadata TEXT;',
  },
  resultMemoryMigration,
  eventCursorMigration,
  agentSettingsPerUserMigration,
  journalMigration,
  vectorsPerModelMigration,
  journalPayloadsMigration,
  runStopRequestsMigration,
  sessionsPerUserMigration,
  messageSearchMigration,
  messageVersionsMigration,
  runMessagesMigration,
  runConversationsMigration,
];
