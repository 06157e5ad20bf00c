import type { Migration } from '../sql/migrations.ts';

/**
 * The schema, the same tables as the SQLite store's migrations build, written for PostgreSQL: times are
 * BIGINT milliseconds, JSON is kept as the text it was written as (so a value reads back exactly), and
 * chunks carry a generated `tsvector` with a GIN index for keyword search. Append new migrations; never
 * edit one that shipped.
 */
export const MIGRATIONS: Migration[] = [
  {
    id: '001-schema',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT,
        created_at BIGINT NOT NULL
      );
      INSERT INTO users (id, name, created_at) VALUES ('local', 'local', 0);
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title TEXT NOT NULL DEFAULT '',
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE INDEX sessions_by_user ON sessions(user_id, updated_at DESC);
      CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        parts TEXT,
        metadata TEXT,
        run_id TEXT,
        created_at BIGINT NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        position BIGINT GENERATED ALWAYS AS IDENTITY,
        parent_id TEXT,
        root_id TEXT NOT NULL,
        session_id TEXT,
        user_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        task TEXT NOT NULL,
        model TEXT NOT NULL,
        depth INTEGER NOT NULL,
        status TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        envelope TEXT,
        started_at BIGINT NOT NULL,
        ended_at BIGINT,
        owner_pid INTEGER,
        owner_host TEXT
      );
      CREATE INDEX runs_by_user ON runs(user_id, started_at DESC) WHERE parent_id IS NULL;
      CREATE INDEX runs_by_root ON runs(root_id);
      CREATE INDEX runs_running ON runs(status) WHERE status = 'running';
      CREATE TABLE events (
        root_id TEXT NOT NULL,
        root_seq INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        time BIGINT NOT NULL,
        body TEXT NOT NULL,
        payload_hash TEXT,
        PRIMARY KEY (root_id, root_seq),
        UNIQUE (run_id, seq)
      );
      CREATE INDEX events_payload ON events(payload_hash) WHERE payload_hash IS NOT NULL;
      CREATE TABLE payloads (
        hash TEXT PRIMARY KEY,
        body TEXT NOT NULL
      );
      CREATE TABLE settings (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE TABLE http_cache (
        key TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        url TEXT NOT NULL,
        status INTEGER NOT NULL,
        content_type TEXT NOT NULL,
        body BYTEA NOT NULL,
        stored_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX http_cache_expiry ON http_cache(expires_at);
      CREATE TABLE subagent_results (
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        agent TEXT NOT NULL,
        model TEXT NOT NULL,
        input TEXT NOT NULL,
        envelope TEXT NOT NULL,
        finished_at BIGINT NOT NULL,
        PRIMARY KEY (user_id, session_id, agent, model, input)
      );
      CREATE TABLE journal (
        journal_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        run_key TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        body TEXT NOT NULL,
        payload_hash TEXT,
        PRIMARY KEY (journal_id, position),
        UNIQUE (journal_id, run_key, kind, key)
      );
      CREATE INDEX journal_payload ON journal(payload_hash) WHERE payload_hash IS NOT NULL;
      CREATE TABLE journal_attempts (
        root_run_id TEXT PRIMARY KEY,
        position BIGINT GENERATED ALWAYS AS IDENTITY,
        journal_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        spec TEXT NOT NULL,
        started_at BIGINT NOT NULL
      );
      CREATE INDEX journal_attempts_by_journal ON journal_attempts(journal_id, started_at);
      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title TEXT NOT NULL,
        filename TEXT NOT NULL,
        type TEXT NOT NULL,
        pages INTEGER NOT NULL,
        size BIGINT NOT NULL,
        chars BIGINT NOT NULL,
        hash TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        added_at BIGINT NOT NULL,
        UNIQUE (user_id, hash)
      );
      CREATE INDEX documents_by_user ON documents(user_id, added_at DESC);
      CREATE TABLE document_tags (
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (document_id, tag)
      );
      CREATE INDEX document_tags_by_user ON document_tags(user_id, tag);
      CREATE TABLE chunk_id_blocks (
        slot INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE
      );
      CREATE TABLE chunks (
        id BIGINT PRIMARY KEY,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        page INTEGER NOT NULL,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        text TEXT NOT NULL,
        words TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
      );
      CREATE INDEX chunks_by_document ON chunks(document_id, seq);
      CREATE INDEX chunks_by_user ON chunks(user_id);
      CREATE INDEX chunks_words ON chunks USING GIN (words);
      CREATE TABLE chunk_vectors (
        chunk_id BIGINT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        user_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        vector BYTEA NOT NULL,
        PRIMARY KEY (chunk_id, model)
      );
      CREATE INDEX chunk_vectors_by_user ON chunk_vectors(user_id, model);
    `,
  },
  {
    // A stop asked of a tree that runs in another process, kept until that process takes it.
    id: '002-run-stop-requests',
    sql: `
      CREATE TABLE run_stop_requests (
        root_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        requested_at BIGINT NOT NULL
      );
    `,
  },
  {
    // The tokens each tree has spent, shared by every process that runs a part of it (runs as jobs).
    id: '003-tree-ledger',
    sql: `
      CREATE TABLE tree_ledger (
        root_id TEXT PRIMARY KEY,
        spent BIGINT NOT NULL
      );
    `,
  },
  {
    // Approvals asked by runs on workers, answered from any process; the secret decisions are signed with.
    id: '004-shared-approvals',
    sql: `
      CREATE TABLE pending_approvals (
        approval_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        request TEXT NOT NULL,
        decision TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX pending_approvals_by_user ON pending_approvals(user_id, created_at);
      CREATE TABLE shared_secrets (
        name TEXT PRIMARY KEY,
        secret TEXT NOT NULL
      );
    `,
  },
  {
    // A session is its user's: its key is (user, id), so a chat client's id that another user already has
    // makes a session of the caller's own, and nothing answers differently for an id someone else uses.
    // Messages (and remembered sub-agent results) belong to their session the same way.
    id: '005-sessions-per-user',
    sql: `
      ALTER TABLE messages DROP CONSTRAINT messages_session_id_fkey;
      ALTER TABLE subagent_results DROP CONSTRAINT subagent_results_session_id_fkey;
      ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
      ALTER TABLE sessions ADD PRIMARY KEY (user_id, id);
      ALTER TABLE messages ADD COLUMN user_id TEXT;
      UPDATE messages m SET user_id = s.user_id FROM sessions s WHERE s.id = m.session_id;
      DELETE FROM messages WHERE user_id IS NULL;
      ALTER TABLE messages ALTER COLUMN user_id SET NOT NULL;
      ALTER TABLE messages DROP CONSTRAINT messages_pkey;
      ALTER TABLE messages DROP CONSTRAINT messages_session_id_seq_key;
      ALTER TABLE messages ADD PRIMARY KEY (user_id, session_id, id);
      ALTER TABLE messages ADD UNIQUE (user_id, session_id, seq);
      ALTER TABLE messages ADD FOREIGN KEY (user_id, session_id)
        REFERENCES sessions(user_id, id) ON DELETE CASCADE;
      DELETE FROM subagent_results r
        WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = r.user_id AND s.id = r.session_id);
      ALTER TABLE subagent_results ADD FOREIGN KEY (user_id, session_id)
        REFERENCES sessions(user_id, id) ON DELETE CASCADE;
    `,
  },
  {
    // Who works the queue and what each holds: a worker is alive while its lease (an advisory lock on a
    // connection of its own) is held, so a killed worker's jobs are known at once, on any machine. A
    // resume claim names the process that holds it.
    id: '006-worker-leases',
    sql: `
      CREATE TABLE workers (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        standing BOOLEAN NOT NULL,
        started_at BIGINT NOT NULL
      );
      CREATE TABLE job_holders (
        job_id UUID PRIMARY KEY,
        kind TEXT NOT NULL,
        retry_count INTEGER NOT NULL,
        worker_id TEXT NOT NULL,
        root_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        taken_at BIGINT NOT NULL
      );
      CREATE INDEX job_holders_by_worker ON job_holders(worker_id);
      CREATE TABLE claims (
        key TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL
      );
    `,
  },
  {
    // A parent job that waits on its children holds nothing: its job is set aside (cancelled in pg-boss)
    // with the child jobs it waits on, and put back on the queue when the last of them ends.
    id: '007-suspended-jobs',
    sql: `
      CREATE TABLE suspended_jobs (
        job_id UUID PRIMARY KEY,
        kind TEXT NOT NULL,
        waiting UUID[] NOT NULL,
        woken BOOLEAN NOT NULL DEFAULT false,
        suspended_at BIGINT NOT NULL
      );
    `,
  },
  {
    // Full-text search over each user's messages (the chat list's search), stemmed as documents are.
    id: '008-message-search',
    sql: `
      ALTER TABLE messages
        ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED;
      CREATE INDEX messages_search ON messages USING GIN (search);
    `,
  },
  {
    // Earlier versions of a session's answers: the messages a regenerate or an edit replaced, kept as one
    // JSON list after the message they followed (null: the session's start); they go with their session.
    id: '009-message-versions',
    sql: `
      CREATE TABLE message_versions (
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        after_id TEXT,
        messages TEXT NOT NULL,
        replaced_at BIGINT NOT NULL,
        PRIMARY KEY (user_id, session_id, id),
        FOREIGN KEY (user_id, session_id) REFERENCES sessions(user_id, id) ON DELETE CASCADE
      );
    `,
  },
  {
    // What `cadre workers` shows of each worker: its slots, and how many it last said it uses.
    id: '010-worker-slots',
    sql: `
      ALTER TABLE workers ADD COLUMN concurrency INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE workers ADD COLUMN slots_used INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // Messages a person sent to a running run that the worker running it has not taken yet: each is taken
    // once, and the run records it in the tree's journal at the step it joins.
    id: '011-run-messages',
    sql: `
      CREATE TABLE run_messages (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        text TEXT NOT NULL,
        sent_at BIGINT NOT NULL
      );
      CREATE INDEX run_messages_by_run ON run_messages(run_id, sent_at);
    `,
  },
  {
    // Finished runs' conversations, kept so a later step, turn or worker can continue one (continue_agent,
    // a person's follow-up): the JSON of its messages, or NULL when it was larger than
    // limits.maxStoredOutputChars (chars says how large). They go with their tree.
    id: '012-run-conversations',
    sql: `
      CREATE TABLE run_conversations (
        run_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        conversation TEXT,
        chars INTEGER NOT NULL,
        kept_at BIGINT NOT NULL
      );
    `,
  },
];
