import { describe, expect, it } from 'vitest';
import { makePdf } from '../../../test/fixtures/documents/build-fixtures.ts';
import { testServer } from '../../../test/helpers/server.ts';

function upload(files: Array<{ name: string; bytes: Uint8Array | string; type?: string }>) {
  const form = new FormData();
  for (const file of files)
    form.append('file', new File([file.bytes as BlobPart], file.name, { type: file.type ?? '' }));
  return { method: 'POST', body: form };
}

describe('the documents routes', () => {
  it('adds several files in one upload, lists, searches and deletes them', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const response = await app.request(
      '/api/documents',
      upload([
        {
          name: 'birds.pdf',
          bytes: makePdf(['Owls hunt at night.', 'Herons wait in shallow water.'], 'Birds'),
          type: 'application/pdf',
        },
        { name: 'notes.md', bytes: '# Notes\n\nKingfishers dive for fish.' },
        { name: 'fake.pdf', bytes: 'not a pdf at all' },
      ]),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      documents: Array<{
        id: string;
        title: string;
        type: string;
        pages: number;
        size_bytes: number;
        duplicate: boolean;
      }>;
      errors: Array<{ filename: string; message: string }>;
    };
    expect(body.documents.map((document) => [document.type, document.pages])).toEqual([
      ['pdf', 2],
      ['markdown', 1],
    ]);
    expect(body.errors).toEqual([expect.objectContaining({ filename: 'fake.pdf' })]);

    const listed = (await (await app.request('/api/documents')).json()) as {
      documents: Array<{ id: string }>;
    };
    expect(listed.documents).toHaveLength(2);
    const search = (await (await app.request('/api/documents/search?q=herons')).json()) as {
      results: Array<{ documentId: string; page: number; snippet: string }>;
    };
    expect(search.results[0]).toMatchObject({ documentId: body.documents[0]!.id, page: 2 });

    expect((await app.request(`/api/documents/${body.documents[0]!.id}`, { method: 'DELETE' })).status).toBe(
      200,
    );
    expect((await app.request(`/api/documents/${body.documents[0]!.id}`, { method: 'DELETE' })).status).toBe(
      404,
    );
    const after = (await (await app.request('/api/documents')).json()) as { documents: unknown[] };
    expect(after.documents).toHaveLength(1);
  });

  it('refuses an upload whose every file is refused, and one with no files, saying why', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const refused = await app.request('/api/documents', upload([{ name: 'fake.pdf', bytes: 'nope' }]));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { message: expect.stringContaining('fake.pdf') } });
    const empty = await app.request('/api/documents', { method: 'POST', body: new FormData() });
    expect(empty.status).toBe(400);
    expect((await app.request('/api/documents/search?q=')).status).toBe(400);
  });
});
