import { describe, expect, it, vi } from 'vitest';
import { makePdf } from '../../../test/fixtures/documents/build-fixtures.ts';
import { heldGate, testServer } from '../../../test/helpers/server.ts';

function upload(files: Array<{ name: string; bytes: Uint8Array | string; type?: string }>) {
  const form = new FormData();
  for (const file of files)
    form.append('file', new File([file.bytes as BlobPart], file.name, { type: file.type ?? '' }));
  return { method: 'POST', body: form };
}

const TIDES = '# Tidal notes\n\nTides rise and fall twice a day because of the Moon.\n';

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

  it("keeps each user's documents theirs: another's list, search and delete see nothing", async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }]);
    const alice = { authorization: `Bearer ${(await cadre.users.add('alice')).token}` };
    const bob = { authorization: `Bearer ${(await cadre.users.add('bob')).token}` };
    const added = (await (
      await app.request('/api/documents', { ...upload([{ name: 'tides.md', bytes: TIDES }]), headers: alice })
    ).json()) as { documents: Array<{ id: string }> };
    const id = added.documents[0]!.id;
    expect(await (await app.request('/api/documents', { headers: bob })).json()).toEqual({ documents: [] });
    expect(await (await app.request('/api/documents/search?q=tides', { headers: bob })).json()).toEqual({
      results: [],
    });
    expect((await app.request(`/api/documents/${id}`, { method: 'DELETE', headers: bob })).status).toBe(404);
    expect((await app.request('/api/documents', upload([{ name: 'x.md', bytes: TIDES }]))).status).toBe(401);
    const still = (await (await app.request('/api/documents', { headers: alice })).json()) as {
      documents: unknown[];
    };
    expect(still.documents).toHaveLength(1);
  });

  it('refuses an upload over the limit with 413, before parsing it', async () => {
    const { app } = await testServer([{ text: 'hi' }], { server: { limits: { maxUploadBytes: 2000 } } });
    const large = await app.request(
      '/api/documents',
      upload([{ name: 'big.md', bytes: 'word '.repeat(1000) }]),
    );
    expect(large.status).toBe(413);
    expect(await large.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('streams progress events for a large file when asked for text/event-stream', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const big = Array.from({ length: 30_000 }, (_, index) => `Line ${index} about tides and the Moon.`).join(
      '\n',
    );
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const response = await app.request('/api/documents', {
      ...upload([
        { name: 'big.md', bytes: big },
        { name: 'small.md', bytes: TIDES },
      ]),
      headers: { accept: 'text/event-stream' },
    });
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.includes('data:'))
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)?.[1],
        data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!),
      }));
    const progress = events.filter((event) => event.event === 'progress').map((event) => event.data);
    expect(progress.every((item) => item.filename === 'big.md')).toBe(true);
    expect(progress.map((item) => item.phase)).toEqual(
      expect.arrayContaining(['parsing', 'indexing', 'done']),
    );
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.documents).toHaveLength(2);
  });

  it('refuses an upload of more files than one request may carry, before parsing any', async () => {
    const { app, cadre } = await testServer([{ text: 'hi' }]);
    let parsed = 0;
    const add = cadre.documents.add.bind(cadre.documents);
    cadre.documents.add = (...args) => {
      parsed++;
      return add(...args);
    };
    const many = Array.from({ length: 2000 }, (_, index) => ({
      name: `n${index}.txt`,
      bytes: `note ${index}`,
    }));
    const started = performance.now();
    const response = await app.request('/api/documents', upload(many));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'too_many_files' } });
    expect(parsed).toBe(0);
    // 2,000 files were each parsed in a worker, for minutes; the refusal takes well under the 150 that took 46 s.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('counts parts as they arrive: a body of 200,000 empty parts is refused after reading a sliver of it', async () => {
    const { app } = await testServer([{ text: 'hi' }]);
    const boundary = 'cadre-many-parts';
    const part = new TextEncoder().encode(
      `--${boundary}\r\ncontent-disposition: form-data; name="x"\r\n\r\n\r\n`,
    );
    const parts = 200_000;
    const total = part.byteLength * parts;
    let pulled = 0;
    let sent = 0;
    // Sent 1,000 parts per chunk, as a client would stream it; the server decides how much it reads.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= parts) {
          controller.enqueue(new TextEncoder().encode(`--${boundary}--\r\n`));
          controller.close();
          return;
        }
        const chunk = new Uint8Array(part.byteLength * 1000);
        for (let index = 0; index < 1000; index++) chunk.set(part, index * part.byteLength);
        sent += 1000;
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await app.request('/api/documents', {
      method: 'POST',
      body,
      duplex: 'half',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(total),
      },
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'too_many_files' } });
    // Parsed whole, the form was read to its end (and built: 1.1 GB for 700,000 parts).
    expect(pulled).toBeLessThan(total / 20);
  });

  it('caps uploads in progress per user and for the whole server (429), and frees the slot when one ends', async () => {
    const { gate, release } = heldGate();
    const { app, cadre } = await testServer([{ text: 'hi' }], {
      server: { limits: { maxConcurrentUploads: 2, maxConcurrentUploadsTotal: 3 } },
    });
    const alice = { authorization: `Bearer ${(await cadre.users.add('alice')).token}` };
    const bob = { authorization: `Bearer ${(await cadre.users.add('bob')).token}` };
    const add = cadre.documents.add.bind(cadre.documents);
    let entered = 0;
    cadre.documents.add = async (...args) => {
      entered++;
      await gate;
      return add(...args);
    };
    const send = (headers: Record<string, string>, name: string) =>
      app.request('/api/documents', { ...upload([{ name, bytes: TIDES }]), headers });
    const held = [send(alice, 'a1.md'), send(alice, 'a2.md')];
    await vi.waitFor(() => expect(entered).toBe(2));
    const third = await send(alice, 'a3.md');
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({ error: { code: 'too_many_uploads' } });
    held.push(send(bob, 'b1.md'));
    await vi.waitFor(() => expect(entered).toBe(3));
    const overTotal = await send(bob, 'b2.md');
    expect(overTotal.status).toBe(429);
    expect(JSON.stringify(await overTotal.json())).toContain('maxConcurrentUploadsTotal');
    release();
    expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200, 200]);
    expect((await send(alice, 'a4.md')).status).toBe(200);
  });
});
