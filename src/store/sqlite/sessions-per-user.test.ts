import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { SqlResultMemory } from '../sql/result-memory.ts';
import { SqlSessionStore } from '../sql/session-store.ts';
import { migrate } from './database.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { SqliteSqlDatabase } from './sql-port.ts';

/** A database as a Cadre from before sessions were keyed by user left it. */
function databaseBeforeSessionsPerUser(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('CREATE TABLE migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const migration of MIGRATIONS.slice(
    0,
    MIGRATIONS.findIndex((m) => m.id === '014-sessions-per-user'),
  )) {
    db.exec(migration.sql);
    db.prepare('INSERT INTO migrations (id, applied_at) VALUES (?, 0)').run(migration.id);
  }
  db.exec(`
    INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0);
    INSERT INTO sessions (id, user_id, title, created_at, updated_at) VALUES
      ('chat-1', 'alice', 'Tides', 1, 2), ('chat-2', 'bob', 'Bob''s', 3, 4);
    INSERT INTO messages (id, session_id, seq, role, content, parts, metadata, run_id, created_at) VALUES
      ('q1', 'chat-1', 0, 'user', 'why tides?', '[{"type":"text","text":"why tides?"}]', NULL, NULL, 1),
      ('a1', 'chat-1', 1, 'assistant', 'the moon', NULL, '{"status":"ok"}', 'run_1', 2),
      ('q2', 'chat-2', 0, 'user', 'bob asks', NULL, NULL, NULL, 3);
    INSERT INTO subagent_results (user_id, session_id, agent, model, input, envelope, finished_at) VALUES
      ('alice', 'chat-1', 'math', 'm', '{}', '{"status":"ok","summary":"kept"}', 5);
  `);
  return db;
}

describe('the migration that keys sessions by user', () => {
  it('keeps every session, message and remembered result with its user', async () => {
    const db = databaseBeforeSessionsPerUser();
    migrate(db);
    const sessions = new SqlSessionStore(new SqliteSqlDatabase(db));
    expect(await sessions.get('alice', 'chat-1')).toMatchObject({
      title: 'Tides',
      messages: [
        { id: 'q1', role: 'user', content: 'why tides?', parts: [{ type: 'text', text: 'why tides?' }] },
        { id: 'a1', role: 'assistant', content: 'the moon', metadata: { status: 'ok' }, runId: 'run_1' },
      ],
    });
    expect(await sessions.get('bob', 'chat-2')).toMatchObject({ messages: [{ id: 'q2' }] });
    const results = new SqlResultMemory(new SqliteSqlDatabase(db));
    const key = { userId: 'alice', sessionId: 'chat-1', agent: 'math', model: 'm', input: '{}' };
    expect(await results.recall(key)).toMatchObject({ finishedAt: 5 });

    // From now on bob may have a chat-1 of his own, and deleting it leaves alice's whole.
    await sessions.create('bob', { id: 'chat-1' });
    await sessions.append('bob', 'chat-1', { id: 'q1', role: 'user', content: 'bob too' });
    expect(await sessions.delete('bob', 'chat-1')).toBe(true);
    expect((await sessions.get('alice', 'chat-1'))?.messages).toHaveLength(2);
    // A session's messages and results still go with it.
    expect(await sessions.delete('alice', 'chat-1')).toBe(true);
    expect(db.prepare("SELECT count(*) AS n FROM messages WHERE session_id = 'chat-1'").get()).toEqual({
      n: 0,
    });
    expect(await results.recall(key)).toBeUndefined();
    expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
  });
});
