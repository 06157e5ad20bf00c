import { readFileSync } from 'node:fs';
import { MockEmbeddingModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { makePdf, makeXlsx } from '../../test/fixtures/documents/build-fixtures.ts';
import { answeringLater } from '../../test/helpers/later-store.ts';
import { openDatabase } from '../store/sqlite/database.ts';
import { SqliteDocumentStore as DocumentStore } from '../store/sqlite/documents/document-store.ts';
import { ingestDocument, ingestFile } from './ingest.ts';

const fixture = (name: string) => new URL(`../../test/fixtures/documents/${name}`, import.meta.url);
const text = (value: string) => new TextEncoder().encode(value);

function setup() {
  const store = new DocumentStore(openDatabase(':memory:'));
  return { store };
}

async function fullText(store: DocumentStore, userId: string, id: string): Promise<string> {
  return (await store.chunks(userId, id)).map((chunk) => chunk.text).join('');
}

describe('ingestDocument', () => {
  it('reads a PDF page by page in a worker, with its title and page positions', async () => {
    const { store } = setup();
    const bytes = makePdf(
      [
        'Quarterly revenue grew by 12 percent.\nCosts stayed flat.',
        'The invoice backlog shrank to 40 items.',
      ],
      'Q3 Report',
    );
    const { document, duplicate } = await ingestDocument(store, 'local', { filename: 'q3.pdf', bytes });
    expect(duplicate).toBe(false);
    expect(document).toMatchObject({ title: 'Q3 Report', filename: 'q3.pdf', type: 'pdf', pages: 2 });
    expect(document.size).toBe(bytes.byteLength);
    const chunks = await store.chunks('local', document.id);
    expect(chunks.map((chunk) => chunk.page)).toEqual([1, 2]);
    expect(chunks[1]!.text).toContain('invoice backlog');
    expect(chunks[1]!.start).toBe(chunks[0]!.end);
    expect(await fullText(store, 'local', document.id)).toContain('Costs stayed flat.\n\nThe invoice');
  });

  it('reads Markdown with its front matter title, and keeps its text whole', async () => {
    const { store } = setup();
    const bytes = new Uint8Array(readFileSync(fixture('handbook.md')));
    const { document } = await ingestDocument(store, 'local', {
      filename: 'handbook.md',
      bytes,
      tags: ['HR', ' policies ', 'hr'],
    });
    expect(document).toMatchObject({ title: 'Employee Handbook', type: 'markdown', pages: 1 });
    expect(document.tags).toEqual(['hr', 'policies']);
    expect(await fullText(store, 'local', document.id)).toContain('25 days of annual leave');
  });

  it('keeps the readable text of HTML, without navigation, scripts or footers', async () => {
    const { store } = setup();
    const bytes = new Uint8Array(readFileSync(fixture('article.html')));
    const { document } = await ingestDocument(store, 'local', { filename: 'tidal.html', bytes });
    const body = await fullText(store, 'local', document.id);
    expect(document.title).toContain('Tidal Power Explained');
    expect(body).toContain('La Rance station in Brittany');
    expect(body).toContain('## Costs');
    expect(body).not.toContain('Subscribe now');
    expect(body).not.toContain('tracking');
  });

  it('turns CSV into a Markdown table, quotes and commas inside cells included', async () => {
    const { store } = setup();
    const bytes = new Uint8Array(readFileSync(fixture('budget.csv')));
    const { document } = await ingestDocument(store, 'local', { filename: 'budget.csv', bytes });
    const body = await fullText(store, 'local', document.id);
    expect(document.type).toBe('csv');
    expect(body).toContain('| Department | Quarter | Budget | Note |');
    expect(body).toContain('| Research | Q1 | 120000 | includes "lab" equipment |');
    expect(body).toContain('| Marketing | Q1 | 60000 | trade fair, Berlin |');
  });

  it('turns each XLSX sheet into a table (one page per sheet), dates as dates', async () => {
    const { store } = setup();
    const bytes = makeXlsx({
      Sales: [
        ['Region', 'Amount', 'Closed', 'Won'],
        ['North', 1200.5, new Date('2024-03-01T00:00:00Z'), true],
        ['South', 900, new Date('2024-03-02T00:00:00Z'), false],
      ],
      Contacts: [['Name'], ['Ada Lovelace']],
    });
    const { document } = await ingestDocument(store, 'local', { filename: 'sales.xlsx', bytes });
    expect(document).toMatchObject({ type: 'xlsx', pages: 2, title: 'sales' });
    const chunks = await store.chunks('local', document.id);
    expect(chunks[0]!.text).toContain('## Sheet: Sales');
    expect(chunks[0]!.text).toContain('| North | 1200.5 | 2024-03-01 | TRUE |');
    expect(chunks.at(-1)!.page).toBe(2);
    expect(chunks.at(-1)!.text).toContain('Ada Lovelace');
  });

  it('recognises the same content added twice by its hash, whatever the name', async () => {
    const { store } = setup();
    const bytes = text('The same words twice.');
    const first = await ingestDocument(store, 'local', { filename: 'a.txt', bytes });
    const second = await ingestDocument(store, 'local', { filename: 'b.txt', bytes });
    expect(second.duplicate).toBe(true);
    expect(second.document.id).toBe(first.document.id);
    expect(await store.count('local')).toBe(1);
  });

  it('gives one document to the same bytes added twice at once', async () => {
    const { store } = setup();
    const remote = answeringLater(store);
    const bytes = text('Two uploads of these words, at the same moment.');
    const both = await Promise.all([
      ingestDocument(remote, 'local', { filename: 'a.txt', bytes }),
      ingestDocument(remote, 'local', { filename: 'b.txt', bytes }),
    ]);
    expect(both.map((result) => result.duplicate).sort()).toEqual([false, true]);
    expect(both[0].document.id).toBe(both[1].document.id);
    expect(await store.count('local')).toBe(1);
  });

  it('undoes a document whose embedding fails, so none is left half-indexed', async () => {
    const { store } = setup();
    // Through a store that answers later (as one over the network does), then looked at directly.
    const remote = answeringLater(store);
    let calls = 0;
    const model = new MockEmbeddingModelV4({
      maxEmbeddingsPerCall: 100,
      doEmbed: async ({ values }) => {
        calls++;
        if (calls > 1) throw new Error('embedding service unavailable');
        return { embeddings: values.map(() => [1, 0]), warnings: [] };
      },
    });
    const pages = ['alpha '.repeat(400), 'beta '.repeat(400), 'gamma '.repeat(400)];
    await expect(
      ingestDocument(
        remote,
        'local',
        { filename: 'three.txt', bytes: text(pages.join('\n\n')) },
        { embedder: { model, name: 'toy', batchSize: 1 } },
      ),
    ).rejects.toThrow(/embedding service unavailable/);
    expect(calls).toBe(2);
    expect(await store.count('local')).toBe(0);
    expect(await store.vectors('local', 'toy')).toEqual([]);
  });

  it('refuses content that does not match its type, saying what it is', async () => {
    const { store } = setup();
    const pdf = makePdf(['hello']);
    await expect(ingestDocument(store, 'local', { filename: 'notes.txt', bytes: pdf })).rejects.toThrow(
      /notes\.txt: the name says plain text but the content is a PDF/,
    );
    await expect(
      ingestDocument(store, 'local', { filename: 'report.pdf', bytes: text('just some text') }),
    ).rejects.toThrow(/report\.pdf: the name says a PDF but the content is plain text/);
    await expect(
      ingestDocument(store, 'local', { filename: 'sheet.xlsx', bytes: text('a,b\n1,2') }),
    ).rejects.toThrow(/the name says an XLSX workbook but the content is plain text/);
    await expect(
      ingestDocument(store, 'local', { filename: 'data.csv', bytes: new Uint8Array([1, 0, 2, 0, 3]) }),
    ).rejects.toThrow(/the content is binary data/);
    await expect(
      ingestDocument(store, 'local', {
        filename: 'latin.txt',
        bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9]),
      }),
    ).rejects.toThrow(/not valid UTF-8/);
    expect(await store.count('local')).toBe(0);
  });

  it('refuses a ZIP that is not a workbook and a PDF that does not parse', async () => {
    const { store } = setup();
    const { zipSync, strToU8 } = await import('fflate');
    const zip = zipSync({ 'readme.txt': strToU8('hi') });
    await expect(ingestDocument(store, 'local', { filename: 'fake.xlsx', bytes: zip })).rejects.toThrow(
      /not an XLSX workbook/,
    );
    await expect(
      ingestDocument(store, 'local', {
        filename: 'broken.pdf',
        bytes: text('%PDF-1.4\nthis is not really a pdf'),
      }),
    ).rejects.toThrow(/broken\.pdf: not a readable PDF/);
  });

  it('enforces size limits before parsing, and refuses files with no text', async () => {
    const { store } = setup();
    await expect(
      ingestDocument(
        store,
        'local',
        { filename: 'big.txt', bytes: text('x'.repeat(2048)) },
        { limits: { maxFileBytes: 1024 } },
      ),
    ).rejects.toThrow(/big\.txt: 2\.0 KB is more than the limit of 1\.0 KB/);
    await expect(
      ingestDocument(
        store,
        'local',
        { filename: 'long.txt', bytes: text('word '.repeat(100)) },
        { limits: { maxTextChars: 50 } },
      ),
    ).rejects.toThrow(/more than the limit of 50/);
    await expect(
      ingestDocument(store, 'local', { filename: 'blank.md', bytes: text('   \n\n ') }),
    ).rejects.toThrow(/no text could be extracted/);
    await expect(
      ingestDocument(store, 'local', { filename: 'empty.txt', bytes: new Uint8Array() }),
    ).rejects.toThrow(/the file is empty/);
  });

  it('stops a PDF that takes longer than its time cap', async () => {
    const { store } = setup();
    const bytes = makePdf(['slow'.repeat(10)]);
    await expect(
      ingestDocument(store, 'local', { filename: 'slow.pdf', bytes }, { limits: { parseTimeoutMs: 1 } }),
    ).rejects.toThrow(
      /slow\.pdf: reading the PDF took longer than 1 ms and was stopped \(limit documents\.parseTimeoutSeconds in config\)/,
    );
  });

  it('reads files from disk, reporting progress phases', async () => {
    const { store } = setup();
    const phases: string[] = [];
    const { document } = await ingestFile(store, 'local', fixture('handbook.md').pathname, {
      onProgress: (progress) => phases.push(progress.phase),
    });
    expect(document.filename).toBe('handbook.md');
    expect(phases).toEqual(['reading', 'reading', 'parsing', 'indexing', 'indexing', 'done']);
    await expect(ingestFile(store, 'local', '/nonexistent/file.pdf')).rejects.toThrow(/no such file/);
  });
});
