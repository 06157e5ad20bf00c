import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { chunkPages } from '../../../documents/chunk-text.ts';
import type { DocumentType } from '../../../documents/types.ts';
import { openDatabase } from '../database.ts';
import { MIGRATIONS } from '../migrations/index.ts';
import { SqliteDocumentStore as DocumentStore } from './document-store.ts';
import { onlyCommonTerms, toMatchExpression } from './fts-query.ts';
import { userIndex } from './user-index.ts';

const DAY = 86_400_000;
let counter = 0;

async function add(
  store: DocumentStore,
  userId: string,
  pages: string[],
  extra: { type?: DocumentType; tags?: string[]; addedAt?: number; title?: string } = {},
) {
  counter++;
  return store.insert(userId, {
    id: `doc_${counter}`,
    title: extra.title ?? `Document ${counter}`,
    filename: `file${counter}.txt`,
    type: extra.type ?? 'text',
    pages: pages.length,
    size: pages.join('').length,
    hash: `hash${counter}`,
    tags: extra.tags ?? [],
    addedAt: extra.addedAt ?? 1_700_000_000_000,
    chunks: chunkPages(pages),
  });
}

function setup() {
  const db = openDatabase(':memory:');
  db.prepare("INSERT INTO users (id, name, created_at) VALUES ('bob', 'bob', 0)").run();
  return { db, store: new DocumentStore(db) };
}

describe('toMatchExpression', () => {
  it('quotes every term, keeps phrases, prefixes, OR and exclusions', async () => {
    expect(toMatchExpression('annual leave')).toBe('("annual" AND "leave")');
    expect(toMatchExpression('annual leave', 'any')).toBe('("annual" OR "leave")');
    expect(toMatchExpression('"annual leave" carry*')).toBe('("annual leave" AND "carry"*)');
    expect(toMatchExpression('tidal OR wave -solar')).toBe('("tidal" OR "wave") NOT ("solar")');
    expect(toMatchExpression('e-mail')).toBe('"e mail"');
  });

  it('leaves out common words unless nothing else is left', async () => {
    const common = new Set(['the']);
    expect(toMatchExpression('the notice period', 'all', common)).toBe('("notice" AND "period")');
    expect(toMatchExpression('the', 'all', common)).toBe('"the"');
    expect(toMatchExpression('"the end"', 'all', common)).toBe('"the end"');
    expect(onlyCommonTerms('the', common)).toBe(true);
    expect(onlyCommonTerms('the end', common)).toBe(false);
  });

  it('never lets FTS5 syntax through, and gives nothing for nothing searchable', async () => {
    expect(toMatchExpression('text: NEAR( "x" ) AND ^col')).toBe('("text" AND "NEAR" AND "x" AND "col")');
    expect(toMatchExpression('  ?! ** ')).toBeUndefined();
  });
});

describe('DocumentStore search', () => {
  it('ranks by BM25, marks matches in snippets, and gives page and offset', async () => {
    const { store } = setup();
    const doc = await add(store, 'local', [
      'An introduction with nothing relevant.',
      'Tidal power tidal power tidal: the tides turn turbines.',
    ]);
    await add(store, 'local', ['Wind power is variable; tidal energy is not.']);
    const hits = store.search('local', toMatchExpression('tidal')!);
    expect(hits).toHaveLength(2);
    expect(hits[0]).toMatchObject({ documentId: doc.id, page: 2, start: 40 });
    expect(hits[0]!.snippet).toContain('«Tidal»');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('supports prefix and phrase queries, and stems plain words', async () => {
    const { store } = setup();
    await add(store, 'local', ['The invoices were paid late. Payment terms are thirty days.']);
    const prefixed = store.search('local', toMatchExpression('invoi*')!);
    expect(prefixed).toHaveLength(1);
    expect(prefixed[0]!.snippet).toContain('«invoices»');
    expect(store.search('local', toMatchExpression('invoice')!)).toHaveLength(1);
    expect(store.search('local', toMatchExpression('"payment terms"')!)).toHaveLength(1);
    expect(store.search('local', toMatchExpression('"terms payment"')!)).toHaveLength(0);
  });

  it('filters by document id, type, tag and date', async () => {
    const { store } = setup();
    const old = await add(store, 'local', ['budget report for research'], {
      type: 'pdf',
      tags: ['finance'],
      addedAt: 10 * DAY,
    });
    const recent = await add(store, 'local', ['budget plan for marketing'], {
      type: 'markdown',
      tags: ['plans'],
      addedAt: 20 * DAY,
    });
    const match = toMatchExpression('budget')!;
    const ids = (filter: Parameters<DocumentStore['search']>[2]) =>
      store.search('local', match, filter).map((hit) => hit.documentId);
    expect(ids({ filter: { documentIds: [old.id] } })).toEqual([old.id]);
    expect(ids({ filter: { types: ['markdown'] } })).toEqual([recent.id]);
    expect(ids({ filter: { tags: ['FINANCE'] } })).toEqual([old.id]);
    expect(ids({ filter: { addedAfter: 15 * DAY } })).toEqual([recent.id]);
    expect(ids({ filter: { addedBefore: 15 * DAY } })).toEqual([old.id]);
  });

  it("scopes every read to the caller: another user's id finds nothing", async () => {
    const { store } = setup();
    const secret = await add(store, 'bob', ['the secret merger plan with Initech']);
    expect(store.search('local', toMatchExpression('merger')!)).toEqual([]);
    expect(
      store.search('local', toMatchExpression('merger')!, { filter: { documentIds: [secret.id] } }),
    ).toEqual([]);
    expect(await store.get('local', secret.id)).toBeUndefined();
    expect(await store.chunks('local', secret.id)).toEqual([]);
    expect(await store.list('local')).toEqual([]);
    expect(await store.hitsForChunks('local', [(await store.chunks('bob', secret.id))[0]!.id])).toEqual([]);
    expect(await store.remove('local', secret.id)).toBe(false);
    expect(await store.get('bob', secret.id)).toBeDefined();
  });

  it("ranks each user's chunks among their own, whoever added documents in between", async () => {
    const { store } = setup();
    const mine = [
      await add(store, 'local', ['merger talks with Initech']),
      await add(store, 'local', ['merger merger: the plan']),
    ];
    const theirs = await add(store, 'bob', ['merger merger merger, secretly']);
    mine.push(await add(store, 'local', ['a note on the merger']));
    const match = toMatchExpression('merger')!;
    const hits = store.search('local', match);
    expect(hits.map((hit) => hit.documentId).sort()).toEqual(mine.map((doc) => doc.id).sort());
    expect(hits[0]!.documentId).toBe(mine[1]!.id);
    expect(hits.every((hit) => hit.snippet.includes('«merger»'))).toBe(true);
    const filtered = store.search('local', match, { filter: { types: ['text'] } });
    expect(filtered).toHaveLength(3);
    expect(store.search('bob', match).map((hit) => hit.documentId)).toEqual([theirs.id]);
    const ownIds = (await store.chunks('local', mine[2]!.id)).map((chunk) => chunk.id);
    const otherIds = (await store.chunks('bob', theirs.id)).map((chunk) => chunk.id);
    expect(Math.floor(ownIds[0]! / 2 ** 32)).not.toBe(Math.floor(otherIds[0]! / 2 ** 32));
    expect(store.search('nobody', match)).toEqual([]);
  });

  it('gives a user the same scores, order and common words whatever another user adds', async () => {
    const { store } = setup();
    for (let index = 0; index < 10; index++) {
      const words = index < 3 ? `merger talks ${'merger '.repeat(index)}` : 'quarterly figures';
      await add(store, 'local', [`the ${words} note ${index}`]);
    }
    const match = toMatchExpression('merger')!;
    const ranking = () => store.search('local', match).map((hit) => [hit.chunkId, hit.score]);
    const before = ranking();
    const common = () => [...store.commonTerms('local', ['the', 'merger'], 0.5, 0)];
    expect(common()).toEqual(['the']);
    for (let index = 0; index < 50; index++) await add(store, 'bob', [`merger merger ${index} merger plans`]);
    expect(ranking()).toEqual(before);
    expect(common()).toEqual(['the']);
    expect(store.commonTerms('bob', ['the', 'merger'], 0.5, 0)).toEqual(new Set(['merger']));
  });

  it('finds the words present in more than a share of all chunks', async () => {
    const { store } = setup();
    for (let index = 0; index < 10; index++)
      await add(store, 'local', [`the report number ${index} ${index < 3 ? 'budget' : ''}`]);
    expect([...store.commonTerms('local', ['the', 'budget', 'missing'], 0.5, 0)]).toEqual(['the']);
    expect(store.commonTerms('local', ['the'], 0.5, 1000).size).toBe(0);
    expect(store.commonTerms('nobody', ['the'], 0.5, 0).size).toBe(0);
    const unranked = store.search('local', toMatchExpression('the')!, { ranked: false, limit: 3 });
    expect(unranked).toHaveLength(3);
    expect(unranked.every((hit) => hit.snippet.includes('«the»') && hit.score !== 0)).toBe(true);
  });

  it('removes a document with its chunks, FTS entries and vectors', async () => {
    const { db, store } = setup();
    const kept = await add(store, 'local', ['lasting words here']);
    const doc = await add(store, 'local', ['ephemeral words here']);
    const chunk = (await store.chunks('local', doc.id))[0]!;
    await store.putVectors('local', doc.id, 'm', [{ chunkId: chunk.id, vector: [1, 0] }]);
    expect(await store.remove('local', doc.id)).toBe(true);
    expect(store.search('local', toMatchExpression('ephemeral')!)).toEqual([]);
    const index = userIndex(db, 'local')!;
    expect(db.prepare(`SELECT term, doc FROM ${index.vocab} ORDER BY term`).all()).toEqual([
      { term: 'here', doc: 1 },
      { term: 'last', doc: 1 },
      { term: 'word', doc: 1 },
    ]);
    db.prepare(`INSERT INTO ${index.fts} (${index.fts}, rank) VALUES ('integrity-check', 1)`).run();
    expect(await store.remove('local', kept.id)).toBe(true);
    const leftover = db
      .prepare('SELECT (SELECT count(*) FROM chunks) + (SELECT count(*) FROM chunk_vectors) AS n')
      .get();
    expect(leftover).toEqual({ n: 0 });
  });

  it('reads a range of chunks and round-trips vectors', async () => {
    const { store } = setup();
    const doc = await add(store, 'local', ['a'.repeat(1500), 'b'.repeat(500)]);
    const all = await store.chunks('local', doc.id);
    expect(all.map((chunk) => chunk.text).join('')).toBe(`${'a'.repeat(1500)}\n\n${'b'.repeat(500)}`);
    const middle = await store.chunks('local', doc.id, { from: 1300, to: 1600 });
    expect(middle[0]!.start).toBeLessThanOrEqual(1300);
    expect(middle.at(-1)!.end).toBeGreaterThanOrEqual(1600);
    await store.putVectors('local', doc.id, 'm', [{ chunkId: all[0]!.id, vector: [0.5, -0.25] }]);
    expect([...(await store.vectors('local', 'm'))[0]!.vector]).toEqual([0.5, -0.25]);
    expect(await store.vectors('bob', 'm')).toEqual([]);
  });
});

describe('vectors per model (migration 011)', () => {
  it('keeps the vectors stored while a chunk could have only one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadre-vectors-'));
    try {
      const path = join(dir, 'cadre.db');
      const old = new DatabaseSync(path);
      old.exec('CREATE TABLE migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
      for (const migration of MIGRATIONS.filter((entry) => entry.id < '011')) {
        old.exec(migration.sql);
        old.prepare('INSERT INTO migrations (id, applied_at) VALUES (?, 0)').run(migration.id);
      }
      // A document with a vector as the old schema held it, then reopened (and so migrated).
      old.exec(`
        INSERT INTO documents (id, user_id, title, filename, type, pages, size, chars, hash, tags, added_at)
          VALUES ('doc_old', 'local', 'Old', 'old.txt', 'text', 1, 5, 5, 'h', '[]', 0);
        INSERT INTO chunks (id, document_id, user_id, seq, page, start, end, text)
          VALUES (7, 'doc_old', 'local', 0, 1, 0, 5, 'hello');
      `);
      old
        .prepare(
          'INSERT INTO chunk_vectors (chunk_id, user_id, document_id, model, vector) VALUES (?, ?, ?, ?, ?)',
        )
        .run(7, 'local', 'doc_old', 'a', new Uint8Array(new Float32Array([1, 2]).buffer));
      old.close();
      const migrated = openDatabase(path);
      const store = new DocumentStore(migrated);
      expect((await store.vectors('local', 'a')).map((entry) => [entry.chunkId, [...entry.vector]])).toEqual([
        [7, [1, 2]],
      ]);
      await store.putVectors('local', 'doc_old', 'b', [{ chunkId: 7, vector: [3] }]);
      expect(await store.vectors('local', 'a')).toHaveLength(1);
      expect(await store.vectors('local', 'b')).toHaveLength(1);
      migrated.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
