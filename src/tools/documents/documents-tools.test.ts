import { MockEmbeddingModelV4 } from 'ai/test';
import { beforeEach, describe, expect, it } from 'vitest';
import { makePdf } from '../../../test/fixtures/documents/build-fixtures.ts';
import { answeringLater } from '../../../test/helpers/later-store.ts';
import { testToolContext } from '../../core/test-tool-context.ts';
import type { CadreTool, ToolContext } from '../../core/tool.ts';
import { ingestDocument } from '../../documents/ingest.ts';
import { type Database, openDatabase } from '../../store/sqlite/database.ts';
import { SqliteDocumentStore as DocumentStore } from '../../store/sqlite/documents/document-store.ts';
import { documentTools } from './index.ts';

/** The tools and agents over a store that answers later, as a networked backend does (every await counts). */
const storeOver = (database: Database) => answeringLater(new DocumentStore(database));

const NOW = Date.UTC(2025, 5, 15, 12);
const DAY = 86_400_000;
const text = (value: string) => new TextEncoder().encode(value);

function context(userId: string, inputs: Record<string, unknown> = {}): ToolContext {
  return testToolContext({ userId, inputs, depth: 0 });
}

let db: Database;
let tools: Map<string, CadreTool>;
let aliceContract: string;
let alicePdf: string;
let bobSecret: string;

async function call(name: string, input: unknown, ctx: ToolContext): Promise<any> {
  const tool = tools.get(name)!;
  return tool.execute(tool.input.parse(input), ctx);
}

beforeEach(async () => {
  db = openDatabase(':memory:');
  db.prepare(
    "INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)",
  ).run();
  tools = new Map(documentTools(storeOver(db), { now: () => NOW }).map((tool) => [tool.name, tool]));
  aliceContract = (
    await ingestDocument(
      storeOver(db),
      'alice',
      {
        filename: 'contract.md',
        bytes: text('# Supply Contract\n\nThe notice period for termination is ninety days.\n'),
        tags: ['legal'],
      },
      { now: () => NOW - 30 * DAY },
    )
  ).document.id;
  alicePdf = (
    await ingestDocument(
      storeOver(db),
      'alice',
      {
        filename: 'report.pdf',
        bytes: makePdf(
          ['Revenue summary for the year.', 'Termination of the old supplier saved money.'],
          'Annual Report',
        ),
      },
      { now: () => NOW - 2 * DAY },
    )
  ).document.id;
  bobSecret = (
    await ingestDocument(storeOver(db), 'bob', {
      filename: 'secret.txt',
      bytes: text('Bob private termination plan: the merger with Initech.'),
    })
  ).document.id;
});

describe('search_documents', () => {
  it('finds passages with document id, page and a citation', async () => {
    const output = await call('search_documents', { query: 'termination' }, context('alice'));
    expect(output.results.map((hit: any) => hit.document_id).sort()).toEqual(
      [aliceContract, alicePdf].sort(),
    );
    const pdfHit = output.results.find((hit: any) => hit.document_id === alicePdf);
    expect(pdfHit).toMatchObject({ page: 2, cite: '[Annual Report, p. 2]', type: 'pdf' });
    expect(pdfHit.snippet).toContain('«Termination»');
  });

  it('narrows by document_id and by filter', async () => {
    const byId = await call(
      'search_documents',
      { query: 'termination', document_id: alicePdf },
      context('alice'),
    );
    expect(byId.results.map((hit: any) => hit.document_id)).toEqual([alicePdf]);
    const byType = await call(
      'search_documents',
      { query: 'termination', filter: { type: 'markdown' } },
      context('alice'),
    );
    expect(byType.results.map((hit: any) => hit.document_id)).toEqual([aliceContract]);
    const byTag = await call(
      'search_documents',
      { query: 'termination', filter: { tag: 'legal' } },
      context('alice'),
    );
    expect(byTag.results.map((hit: any) => hit.document_id)).toEqual([aliceContract]);
    const recent = await call(
      'search_documents',
      { query: 'termination', filter: { added_within_days: 7 } },
      context('alice'),
    );
    expect(recent.results.map((hit: any) => hit.document_id)).toEqual([alicePdf]);
  });

  it("never returns another user's passages, even with their document id", async () => {
    const output = await call('search_documents', { query: 'merger Initech' }, context('alice'));
    expect(output.results).toEqual([]);
    expect(output.note).toMatch(/No matching passages/);
    const guessed = await call(
      'search_documents',
      { query: 'termination', document_id: bobSecret },
      context('alice'),
    );
    expect(guessed.results).toEqual([]);
  });
});

describe('read_document', () => {
  it('reads in order from an offset, with pages and the next offset', async () => {
    const first = await call('read_document', { document_id: alicePdf, max_chars: 100 }, context('alice'));
    expect(first).toMatchObject({ title: 'Annual Report', pages: 2, offset: 0, first_page: 1 });
    expect(first.text).toContain('Revenue summary');
    const all = await call('read_document', { document_id: alicePdf }, context('alice'));
    expect(all.next_offset).toBeNull();
    expect(all.last_page).toBe(2);
    const tail = await call(
      'read_document',
      { document_id: alicePdf, offset: 31, max_chars: 100 },
      context('alice'),
    );
    expect(tail.text).toBe(all.text.slice(31, 131));
    expect(tail.first_page).toBe(2);
  });

  it("refuses another user's document exactly like an unknown one", async () => {
    const foreign = call('read_document', { document_id: bobSecret }, context('alice'));
    await expect(foreign).rejects.toThrow(`No document with id "${bobSecret}" in your collection`);
    await expect(call('read_document', { document_id: 'doc_nope' }, context('alice'))).rejects.toThrow(
      'No document with id "doc_nope" in your collection',
    );
  });
});

describe('query_documents', () => {
  it('refuses a filter with more tags than SQLite can bind, before any query runs', async () => {
    const tags = Array.from({ length: 40_000 }, (_, index) => `tag${index}`);
    const tool = tools.get('query_documents')!;
    const parsed = tool.input.safeParse({ operation: 'count', filter: { tag: tags } });
    expect(parsed.success).toBe(false);
    expect(
      tools.get('search_documents')!.input.safeParse({ query: 'x', filter: { tag: tags } }).success,
    ).toBe(false);
  });

  it('answers counts, grouped counts, lists and stats with structured operations', async () => {
    const alice = context('alice');
    expect(await call('query_documents', { operation: 'count' }, alice)).toEqual({
      operation: 'count',
      count: 2,
    });
    const thisWeek = await call(
      'query_documents',
      { operation: 'count', filter: { type: 'pdf', added_within_days: 7 } },
      alice,
    );
    expect(thisWeek.count).toBe(1);
    const byType = await call('query_documents', { operation: 'count', group_by: 'type' }, alice);
    expect(byType.groups).toEqual([
      { group: 'markdown', count: 1 },
      { group: 'pdf', count: 1 },
    ]);
    const listed = await call(
      'query_documents',
      { operation: 'list', order_by: 'title', descending: false },
      alice,
    );
    expect(listed.documents.map((document: any) => document.title)).toEqual([
      'Annual Report',
      'Supply Contract',
    ]);
    const stats = await call('query_documents', { operation: 'stats' }, alice);
    expect(stats).toMatchObject({ documents: 2, pages: 3, by_type: { pdf: 1, markdown: 1 } });
  });

  it("counts and lists only the caller's documents", async () => {
    const bob = context('bob');
    expect((await call('query_documents', { operation: 'count' }, bob)).count).toBe(1);
    const listed = await call('query_documents', { operation: 'list' }, bob);
    expect(listed.documents.map((document: any) => document.id)).toEqual([bobSecret]);
    const filtered = await call(
      'query_documents',
      { operation: 'list', filter: { title_contains: 'Contract' } },
      bob,
    );
    expect(filtered.documents).toEqual([]);
  });

  it('accepts no SQL and refuses bad dates', async () => {
    const tool = tools.get('query_documents')!;
    expect(tool.input.safeParse({ operation: 'sql', query: 'SELECT * FROM documents' }).success).toBe(false);
    expect(tool.input.safeParse({ operation: 'list', filter: { where: '1=1' } }).success).toBe(false);
    await expect(
      call(
        'query_documents',
        { operation: 'count', filter: { added_after: 'last tuesday' } },
        context('alice'),
      ),
    ).rejects.toThrow(/added_after: "last tuesday" is not a date/);
  });
});

describe('search_within_document', () => {
  it('is offered only to agents that name it', () => {
    expect(tools.get('search_within_document')!.explicitOnly).toBe(true);
  });

  it('searches only the run’s own document, whatever the model asks', async () => {
    const output = await call(
      'search_within_document',
      { query: 'termination' },
      context('alice', { document_id: alicePdf }),
    );
    expect(output.document_id).toBe(alicePdf);
    expect(output.results).toHaveLength(1);
    expect(output.results[0]).toMatchObject({ page: 2, cite: '[Annual Report, p. 2]' });
  });

  it("refuses outside analyze_document and for another user's document", async () => {
    await expect(call('search_within_document', { query: 'x' }, context('alice'))).rejects.toThrow(
      /only works inside analyze_document/,
    );
    await expect(
      call('search_within_document', { query: 'merger' }, context('alice', { document_id: bobSecret })),
    ).rejects.toThrow(`No document with id "${bobSecret}"`);
  });
});

describe('hybrid search', () => {
  it('fuses keyword and vector rankings when an embedding model is configured', async () => {
    const hybridDb = openDatabase(':memory:');
    // A toy embedding: counts of a few concept words, enough to make "cancel" find "termination".
    const concepts = [
      ['terminat', 'cancel', 'end'],
      ['revenue', 'income'],
      ['cat', 'dog'],
    ];
    const embedText = (value: string) =>
      concepts.map((words) => words.filter((word) => value.toLowerCase().includes(word)).length + 0.01);
    const model = new MockEmbeddingModelV4({
      doEmbed: async ({ values }: { values: string[] }) => ({
        embeddings: values.map(embedText),
        warnings: [],
      }),
    } as any);
    const embedder = { model, name: 'toy' };
    const { document: contract } = await ingestDocument(
      storeOver(hybridDb),
      'local',
      { filename: 'c.txt', bytes: text('Termination requires ninety days notice.') },
      { embedder },
    );
    await ingestDocument(
      storeOver(hybridDb),
      'local',
      { filename: 'p.txt', bytes: text('Pets: the cat and the dog.') },
      { embedder },
    );
    const [keywordOnly, hybrid] = [
      documentTools(storeOver(hybridDb)),
      documentTools(storeOver(hybridDb), { embedder }),
    ].map((family) => family.find((tool) => tool.name === 'search_documents')!);
    const input = { query: 'how to cancel' };
    expect((await keywordOnly!.execute(input, context('local'))) as any).toMatchObject({ results: [] });
    const fused = (await hybrid!.execute(input, context('local'))) as any;
    expect(fused.results[0].document_id).toBe(contract.id);
    expect(fused.results[0].score).toBeGreaterThan(fused.results[1].score);
    expect(hybridDb.prepare('SELECT count(*) AS n FROM chunk_vectors').get()).toEqual({ n: 2 });
    const other = (await hybrid!.execute(input, context('someone-else'))) as any;
    expect(other.results).toEqual([]);
  });
});
