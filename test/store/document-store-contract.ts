import { describe, expect, it } from 'vitest';
import { chunkPages } from '../../src/documents/chunk-text.ts';
import type { DocumentStore } from '../../src/documents/document-store.ts';
import type { DocumentType, NewDocument } from '../../src/documents/types.ts';
import type { Store } from '../../src/store/store.ts';

const DAY = 86_400_000;
const JAN_1 = Date.UTC(2025, 0, 1);

let counter = 0;

/** A new document made of `pages`, chunked the way ingest chunks them; ids and hashes never repeat. */
function newDocument(
  pages: string[],
  extra: { type?: DocumentType; tags?: string[]; addedAt?: number; title?: string; hash?: string } = {},
): NewDocument {
  counter++;
  return {
    id: `doc_contract_${counter}`,
    title: extra.title ?? `Document ${counter}`,
    filename: `file-${counter}.txt`,
    type: extra.type ?? 'text',
    pages: pages.length,
    size: pages.join('').length + 10,
    hash: extra.hash ?? `hash-${counter}`,
    tags: extra.tags ?? [],
    addedAt: extra.addedAt ?? JAN_1,
    chunks: chunkPages(pages),
  };
}

/**
 * What every backend's `DocumentStore` must do, part of the store contract (`describeStoreContract`).
 * `open` gives a fresh, empty store in which the users `alice` and `bob` exist.
 */
export function describeDocumentStoreContract(open: () => Promise<Store>): void {
  describe('documents', () => {
    it('stores a document with its chunks and reads it back, by id, by hash, in lists and counts', async () => {
      const store = await open();
      const documents = store.documents;
      const input = newDocument(['First page text.', 'Second page, a little longer.'], {
        tags: [' Finance ', 'finance', 'Q3'],
        title: 'Quarterly report',
        type: 'pdf',
      });
      const record = await documents.insert('alice', input);
      const { chunks: _chunks, ...metadata } = input;
      expect(record).toEqual({
        ...metadata,
        userId: 'alice',
        tags: ['finance', 'q3'],
        chars: 'First page text.\n\nSecond page, a little longer.'.length,
      });
      expect(await documents.get('alice', input.id)).toEqual(record);
      expect(await documents.findByHash('alice', input.hash)).toEqual(record);
      expect(await documents.findByHash('alice', 'no-such-hash')).toBeUndefined();
      expect(await documents.get('alice', 'no-such-id')).toBeUndefined();
      expect(await documents.list('alice')).toEqual([record]);
      expect(await documents.count('alice')).toBe(1);
      await store.close();
    });

    it('gives back the whole text as ordered, contiguous chunks, or those overlapping a range', async () => {
      const store = await open();
      const documents = store.documents;
      const input = newDocument(['a'.repeat(1500), 'b'.repeat(500)]);
      await documents.insert('alice', input);
      const chunks = await documents.chunks('alice', input.id);
      expect(chunks.map((chunk) => chunk.text).join('')).toBe(`${'a'.repeat(1500)}\n\n${'b'.repeat(500)}`);
      expect(chunks.map((chunk) => chunk.seq)).toEqual(chunks.map((_, index) => index));
      expect(chunks.map((chunk) => chunk.page)).toEqual(input.chunks.map((chunk) => chunk.page));
      for (const [index, chunk] of chunks.entries()) {
        expect(chunk).toMatchObject({ documentId: input.id, end: chunk.start + chunk.text.length });
        if (index > 0) expect(chunk.start).toBe(chunks[index - 1]!.end);
      }
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(chunks.length);
      const middle = await documents.chunks('alice', input.id, { from: 1300, to: 1600 });
      expect(middle.length).toBeGreaterThan(0);
      expect(middle.length).toBeLessThan(chunks.length);
      expect(middle[0]!.start).toBeLessThanOrEqual(1300);
      expect(middle.at(-1)!.end).toBeGreaterThanOrEqual(1600);
      expect(middle.every((chunk) => chunk.end > 1300 && chunk.start < 1600)).toBe(true);
      expect(await documents.chunks('alice', 'no-such-id')).toEqual([]);
      await store.close();
    });

    it('keeps a title and text exactly, NUL and all, and still finds the words around it', async () => {
      const store = await open();
      const documents = store.documents;
      const input = newDocument(['before\u0000after \u0001 tidal notes'], { title: 'odd\u0000title' });
      await documents.insert('alice', input);
      expect((await documents.get('alice', input.id))?.title).toBe('odd\u0000title');
      expect((await documents.chunks('alice', input.id)).map((chunk) => chunk.text)).toEqual([
        'before\u0000after \u0001 tidal notes',
      ]);
      const [hit] = await documents.keywordSearch('alice', 'tidal', { limit: 5 });
      expect(hit).toMatchObject({ title: 'odd\u0000title', text: 'before\u0000after \u0001 tidal notes' });
      expect(hit!.snippet).toContain('«tidal»');
      await store.close();
    });

    it('keeps one document per user and content hash; another user may have the same bytes', async () => {
      const store = await open();
      const documents = store.documents;
      const first = newDocument(['original words']);
      await documents.insert('alice', first);
      const again = newDocument(['different words, same hash'], { hash: first.hash });
      await expect(documents.insert('alice', again)).rejects.toThrow();
      expect(await documents.count('alice')).toBe(1);
      expect(await documents.get('alice', again.id)).toBeUndefined();
      expect(await documents.chunks('alice', again.id)).toEqual([]);
      expect(await documents.keywordSearch('alice', 'different', { limit: 5 })).toEqual([]);
      const bobs = await documents.insert('bob', { ...again, id: 'doc_contract_bob_copy' });
      expect(await documents.findByHash('bob', first.hash)).toEqual(bobs);
      expect((await documents.findByHash('alice', first.hash))?.id).toBe(first.id);
      await store.close();
    });

    it("answers another user's ids exactly as missing ones, and never shows their documents", async () => {
      const store = await open();
      const documents = store.documents;
      const secret = newDocument(['the secret merger plan with Initech'], { type: 'pdf', tags: ['deal'] });
      await documents.insert('alice', secret);
      const [chunk] = await documents.chunks('alice', secret.id);
      await documents.putVectors('alice', secret.id, 'toy', [{ chunkId: chunk!.id, vector: [1, 0] }]);
      expect(await documents.get('bob', secret.id)).toBeUndefined();
      expect(await documents.findByHash('bob', secret.hash)).toBeUndefined();
      expect(await documents.list('bob')).toEqual([]);
      expect(await documents.count('bob')).toBe(0);
      expect(await documents.chunks('bob', secret.id)).toEqual([]);
      expect(await documents.keywordSearch('bob', 'merger', { limit: 5 })).toEqual([]);
      expect(
        await documents.keywordSearch('bob', 'merger', { limit: 5, filter: { documentIds: [secret.id] } }),
      ).toEqual([]);
      expect(await documents.hitsForChunks('bob', [chunk!.id])).toEqual([]);
      expect(await documents.vectors('bob', 'toy')).toEqual([]);
      expect(await documents.countBy('bob', 'type')).toEqual([]);
      expect(await documents.countBy('bob', 'tag')).toEqual([]);
      expect(await documents.collectionStats('bob')).toEqual({
        documents: 0,
        pages: 0,
        bytes: 0,
        characters: 0,
        chunks: 0,
        byType: {},
        oldestAddedAt: null,
        newestAddedAt: null,
      });
      // Writing to someone else's document changes nothing for anyone.
      await documents.putVectors('bob', secret.id, 'toy', [{ chunkId: chunk!.id, vector: [0, 1] }]);
      expect(await documents.remove('bob', secret.id)).toBe(false);
      expect(await documents.get('alice', secret.id)).toBeDefined();
      expect(await documents.keywordSearch('alice', 'merger', { limit: 5 })).toHaveLength(1);
      expect([...(await documents.vectors('alice', 'toy'))[0]!.vector]).toEqual([1, 0]);
      await store.close();
    });

    it('lists in the order asked, a page at a time, and counts what a filter matches', async () => {
      const store = await open();
      const documents = store.documents;
      const old = newDocument(['one', 'two', 'three'], {
        title: 'beta',
        type: 'pdf',
        tags: ['finance'],
        addedAt: JAN_1,
      });
      const middle = newDocument(['x'.repeat(50)], {
        title: 'Alpha',
        type: 'markdown',
        addedAt: JAN_1 + DAY,
      });
      const recent = newDocument(['y'], {
        title: 'gamma',
        type: 'pdf',
        tags: ['plans'],
        addedAt: JAN_1 + 2 * DAY,
      });
      for (const input of [middle, recent, old]) await documents.insert('alice', input);
      const ids = (records: Array<{ id: string }>) => records.map((record) => record.id);
      expect(ids(await documents.list('alice'))).toEqual([recent.id, middle.id, old.id]);
      expect(ids(await documents.list('alice', { descending: false }))).toEqual([
        old.id,
        middle.id,
        recent.id,
      ]);
      expect(ids(await documents.list('alice', { orderBy: 'title', descending: false }))).toEqual([
        middle.id,
        old.id,
        recent.id,
      ]);
      expect(ids(await documents.list('alice', { orderBy: 'pages' }))[0]).toBe(old.id);
      expect(ids(await documents.list('alice', { limit: 1, offset: 1 }))).toEqual([middle.id]);
      expect(ids(await documents.list('alice', { filter: { types: ['pdf'] } }))).toEqual([recent.id, old.id]);
      expect(await documents.count('alice', { types: ['pdf'] })).toBe(2);
      expect(await documents.count('alice', { tags: ['FINANCE', 'plans'] })).toBe(2);
      expect(await documents.count('alice', { addedAfter: JAN_1 + DAY })).toBe(2);
      expect(await documents.count('alice', { addedBefore: JAN_1 + DAY })).toBe(1);
      expect(await documents.count('alice', { documentIds: [old.id, 'no-such-id'] })).toBe(1);
      expect(await documents.count('alice', { titleContains: 'alph' })).toBe(1);
      expect(await documents.count('alice', { titleContains: '%' })).toBe(0);
      await store.close();
    });

    it('removes a document with its chunks, search entries and vectors, once', async () => {
      const store = await open();
      const documents = store.documents;
      const kept = newDocument(['lasting words here']);
      const gone = newDocument(['ephemeral words here']);
      await documents.insert('alice', kept);
      await documents.insert('alice', gone);
      const [chunk] = await documents.chunks('alice', gone.id);
      await documents.putVectors('alice', gone.id, 'toy', [{ chunkId: chunk!.id, vector: [1, 0] }]);
      expect(await documents.remove('alice', gone.id)).toBe(true);
      expect(await documents.remove('alice', gone.id)).toBe(false);
      expect(await documents.get('alice', gone.id)).toBeUndefined();
      expect(await documents.findByHash('alice', gone.hash)).toBeUndefined();
      expect(await documents.chunks('alice', gone.id)).toEqual([]);
      expect(await documents.keywordSearch('alice', 'ephemeral', { limit: 5 })).toEqual([]);
      expect(await documents.hitsForChunks('alice', [chunk!.id])).toEqual([]);
      expect(await documents.vectors('alice', 'toy')).toEqual([]);
      const words = await documents.keywordSearch('alice', 'words', { limit: 5 });
      expect(words.map((hit) => hit.documentId)).toEqual([kept.id]);
      // The same bytes may be added again once the first copy is gone.
      await documents.insert('alice', { ...gone, id: 'doc_contract_readded' });
      expect((await documents.findByHash('alice', gone.hash))?.id).toBe('doc_contract_readded');
      await store.close();
    });

    describe('keyword search', () => {
      it('ranks chunks with every term, best first, with page, offset and a marked snippet', async () => {
        const store = await open();
        const documents = store.documents;
        const tides = newDocument(
          [
            'An introduction with nothing relevant.',
            'Tidal power tidal power tidal: the tides turn turbines.',
          ],
          { title: 'Tides', type: 'pdf' },
        );
        const wind = newDocument(['Wind power is variable; tidal energy is not.'], { title: 'Wind' });
        const solar = newDocument(['Solar power only, nothing about the sea.'], { title: 'Solar' });
        for (const input of [tides, wind, solar]) await documents.insert('alice', input);
        const hits = await documents.keywordSearch('alice', 'tidal', { limit: 10 });
        expect(hits.map((hit) => hit.documentId)).toEqual([tides.id, wind.id]);
        expect(hits[0]).toMatchObject({
          documentId: tides.id,
          title: 'Tides',
          filename: tides.filename,
          type: 'pdf',
          page: 2,
          start: 'An introduction with nothing relevant.\n\n'.length,
        });
        expect(hits[0]!.text).toContain('Tidal power tidal power');
        expect(hits[0]!.end).toBe(hits[0]!.start + hits[0]!.text.length);
        expect(hits[0]!.snippet).toContain('«Tidal»');
        expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
        const both = await documents.keywordSearch('alice', 'tidal turbines', { limit: 10 });
        expect(both.map((hit) => hit.documentId)).toEqual([tides.id]);
        expect(await documents.keywordSearch('alice', 'tidal', { limit: 1 })).toHaveLength(1);
        await store.close();
      });

      it('falls back to any term when no chunk has them all, but not for a phrase', async () => {
        const store = await open();
        const documents = store.documents;
        const tides = newDocument(['Tidal power turns turbines twice a day.']);
        const wind = newDocument(['Wind farms stand offshore.']);
        for (const input of [tides, wind]) await documents.insert('alice', input);
        const loose = await documents.keywordSearch('alice', 'tidal offshore zeppelin', { limit: 10 });
        expect(loose.map((hit) => hit.documentId).sort()).toEqual([tides.id, wind.id].sort());
        expect(await documents.keywordSearch('alice', '"tidal offshore"', { limit: 10 })).toEqual([]);
        expect(await documents.keywordSearch('alice', 'zeppelin', { limit: 10 })).toEqual([]);
        await store.close();
      });

      it('understands phrases, prefixes and excluded words, and never fails on stray syntax', async () => {
        const store = await open();
        const documents = store.documents;
        const invoices = newDocument(['The invoices were paid late. Payment terms are thirty days.']);
        const budget = newDocument(['The budget for payment systems grew.']);
        for (const input of [invoices, budget]) await documents.insert('alice', input);
        const found = async (query: string) =>
          (await documents.keywordSearch('alice', query, { limit: 10 })).map((hit) => hit.documentId).sort();
        expect(await found('invoi*')).toEqual([invoices.id]);
        expect(await found('"payment terms"')).toEqual([invoices.id]);
        expect(await found('"terms payment"')).toEqual([]);
        expect(await found('payment -budget')).toEqual([invoices.id]);
        expect(await found('payment')).toEqual([invoices.id, budget.id].sort());
        expect(await found('text: NEAR( "payment" ) AND ^col')).toEqual(expect.any(Array));
        expect(await found('  ?! ** ')).toEqual([]);
        await store.close();
      });

      it('narrows by document, type, tag and date', async () => {
        const store = await open();
        const documents = store.documents;
        const old = newDocument(['budget report for research'], {
          type: 'pdf',
          tags: ['finance'],
          addedAt: 10 * DAY,
        });
        const recent = newDocument(['budget plan for marketing'], {
          type: 'markdown',
          tags: ['plans'],
          addedAt: 20 * DAY,
        });
        for (const input of [old, recent]) await documents.insert('alice', input);
        const ids = async (filter: Parameters<DocumentStore['keywordSearch']>[2]['filter']) =>
          (
            await documents.keywordSearch('alice', 'budget', { limit: 10, ...(filter ? { filter } : {}) })
          ).map((hit) => hit.documentId);
        expect((await ids(undefined)).sort()).toEqual([old.id, recent.id].sort());
        expect(await ids({ documentIds: [old.id] })).toEqual([old.id]);
        expect(await ids({ types: ['markdown'] })).toEqual([recent.id]);
        expect(await ids({ tags: ['FINANCE'] })).toEqual([old.id]);
        expect(await ids({ addedAfter: 15 * DAY })).toEqual([recent.id]);
        expect(await ids({ addedBefore: 15 * DAY })).toEqual([old.id]);
        expect(await ids({ types: ['csv'] })).toEqual([]);
        await store.close();
      });
    });

    it('round-trips vectors per model, replaces them, narrows them by filter, and finds their chunks', async () => {
      const store = await open();
      const documents = store.documents;
      const report = newDocument(['a'.repeat(1500), 'b'.repeat(500)], { type: 'pdf' });
      const note = newDocument(['a short note'], { type: 'text' });
      for (const input of [report, note]) await documents.insert('alice', input);
      const [first, second] = await documents.chunks('alice', report.id);
      const [noteChunk] = await documents.chunks('alice', note.id);
      await documents.putVectors('alice', report.id, 'toy', [
        { chunkId: first!.id, vector: [0.5, -0.25, 1] },
        { chunkId: second!.id, vector: [0, 0, 0] },
      ]);
      await documents.putVectors('alice', note.id, 'toy', [{ chunkId: noteChunk!.id, vector: [2, 4, 8] }]);
      await documents.putVectors('alice', report.id, 'other-model', [{ chunkId: first!.id, vector: [9] }]);
      await documents.putVectors('alice', report.id, 'toy', [
        { chunkId: second!.id, vector: [0.125, 3, -2] },
      ]);
      const plain = (entries: Array<{ chunkId: number; vector: Float32Array }>) =>
        entries
          .map((entry) => ({ chunkId: entry.chunkId, vector: [...entry.vector] }))
          .sort((a, b) => a.chunkId - b.chunkId);
      expect(plain(await documents.vectors('alice', 'toy'))).toEqual(
        [
          { chunkId: first!.id, vector: [0.5, -0.25, 1] },
          { chunkId: second!.id, vector: [0.125, 3, -2] },
          { chunkId: noteChunk!.id, vector: [2, 4, 8] },
        ].sort((a, b) => a.chunkId - b.chunkId),
      );
      expect(plain(await documents.vectors('alice', 'other-model'))).toEqual([
        { chunkId: first!.id, vector: [9] },
      ]);
      expect(plain(await documents.vectors('alice', 'toy', { types: ['text'] }))).toEqual([
        { chunkId: noteChunk!.id, vector: [2, 4, 8] },
      ]);
      expect(await documents.vectors('alice', 'no-such-model')).toEqual([]);
      const hits = await documents.hitsForChunks('alice', [noteChunk!.id, 987_654_321, first!.id]);
      expect(hits.map((hit) => [hit.chunkId, hit.documentId])).toEqual([
        [noteChunk!.id, note.id],
        [first!.id, report.id],
      ]);
      expect(hits[0]).toMatchObject({ page: 1, start: 0, end: 12, text: 'a short note' });
      expect(hits[0]!.snippet).toContain('short note');
      expect(await documents.hitsForChunks('alice', [])).toEqual([]);
      await store.close();
    });

    it('counts by type, tag, day and month, largest group first, and totals the collection', async () => {
      const store = await open();
      const documents = store.documents;
      const inputs = [
        newDocument(['one'], { type: 'pdf', tags: ['a'], addedAt: Date.UTC(2025, 0, 1, 12) }),
        newDocument(['two', 'pages'], { type: 'pdf', tags: ['a', 'b'], addedAt: Date.UTC(2025, 0, 2, 9) }),
        newDocument(['three'], { type: 'csv', addedAt: Date.UTC(2025, 1, 2, 23) }),
      ];
      for (const input of inputs) await documents.insert('alice', input);
      await documents.insert('bob', newDocument(['not yours'], { type: 'xlsx', tags: ['a'] }));
      expect(await documents.countBy('alice', 'type')).toEqual([
        { group: 'pdf', count: 2 },
        { group: 'csv', count: 1 },
      ]);
      expect(await documents.countBy('alice', 'tag')).toEqual([
        { group: 'a', count: 2 },
        { group: 'b', count: 1 },
      ]);
      expect(await documents.countBy('alice', 'day')).toEqual([
        { group: '2025-01-01', count: 1 },
        { group: '2025-01-02', count: 1 },
        { group: '2025-02-02', count: 1 },
      ]);
      expect(await documents.countBy('alice', 'month')).toEqual([
        { group: '2025-01', count: 2 },
        { group: '2025-02', count: 1 },
      ]);
      expect(await documents.countBy('alice', 'type', { tags: ['b'] })).toEqual([{ group: 'pdf', count: 1 }]);
      const chunks = inputs.reduce((total, input) => total + input.chunks.length, 0);
      expect(await documents.collectionStats('alice')).toEqual({
        documents: 3,
        pages: 4,
        bytes: inputs.reduce((total, input) => total + input.size, 0),
        characters: 'one'.length + 'two\n\npages'.length + 'three'.length,
        chunks,
        byType: { pdf: 2, csv: 1 },
        oldestAddedAt: Date.UTC(2025, 0, 1, 12),
        newestAddedAt: Date.UTC(2025, 1, 2, 23),
      });
      expect(await documents.collectionStats('alice', { types: ['csv'] })).toMatchObject({
        documents: 1,
        pages: 1,
        byType: { csv: 1 },
      });
      await store.close();
    });
  });
}
