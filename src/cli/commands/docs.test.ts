import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import { makePdf, makeXlsx } from '../../../test/fixtures/documents/build-fixtures.ts';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/sqlite-store.ts';
import type { CliContext } from '../cli-context.ts';
import { docsCommand } from './docs.ts';

let dir: string;
let store: SqliteStore;

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

async function docs(args: string[], userId = 'local') {
  const out = capture();
  const err = capture();
  const context: CliContext = {
    stdout: out.stream,
    stderr: err.stream,
    env: {},
    store,
    userId,
    cwd: dir,
  };
  const code = await docsCommand(args, context);
  return { code, stdout: out.text(), stderr: err.text() };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cadre-docs-'));
  store = openSqliteStore(':memory:');
  writeFileSync(
    join(dir, 'report.pdf'),
    makePdf(['Revenue grew.', 'The audit found three issues.'], 'Audit Report'),
  );
  writeFileSync(join(dir, 'notes.md'), '# Meeting Notes\n\nThe audit committee meets on Fridays.\n');
  writeFileSync(
    join(dir, 'budget.xlsx'),
    makeXlsx({
      Budget: [
        ['Item', 'Cost'],
        ['Audit fees', 12000],
      ],
    }),
  );
});

describe('cadre docs', () => {
  it('adds a PDF, a Markdown file and a spreadsheet, lists, searches and removes them', async () => {
    const added = await docs([
      'add',
      'report.pdf',
      'notes.md',
      join(dir, 'budget.xlsx'),
      '--tags',
      'finance,2025',
      '--json',
    ]);
    expect(added.code).toBe(0);
    const documents = JSON.parse(added.stdout);
    expect(documents.map((document: any) => [document.type, document.title, document.pages])).toEqual([
      ['pdf', 'Audit Report', 2],
      ['markdown', 'Meeting Notes', 1],
      ['xlsx', 'budget', 1],
    ]);
    expect(documents[0]).toMatchObject({
      id: expect.stringMatching(/^doc_/),
      tags: ['finance', '2025'],
      duplicate: false,
    });

    const listed = JSON.parse((await docs(['list', '--json'])).stdout);
    expect(listed).toHaveLength(3);
    const table = await docs(['list']);
    expect(table.stdout).toMatch(/^ID\s+TYPE\s+PAGES\s+SIZE\s+ADDED\s+TITLE/);
    expect(table.stdout).toContain('Audit Report  [finance, 2025]');

    const found = JSON.parse((await docs(['search', 'audit', '--json'])).stdout);
    expect(found.map((hit: any) => hit.title).sort()).toEqual(['Audit Report', 'Meeting Notes', 'budget']);
    expect(found.find((hit: any) => hit.title === 'Audit Report')).toMatchObject({ page: 2 });
    const limited = JSON.parse(
      (await docs(['search', 'audit', '--limit', '1', '--type', 'pdf', '--json'])).stdout,
    );
    expect(limited).toHaveLength(1);
    const plain = await docs(['search', 'audit', 'issues']);
    expect(plain.stdout).toContain('Audit Report, p. 2');
    expect(plain.stdout).toContain('«audit»');

    const removed = await docs(['rm', documents[0].id, '--json']);
    expect(JSON.parse(removed.stdout)).toEqual([
      { id: documents[0].id, removed: true, title: 'Audit Report' },
    ]);
    expect(JSON.parse((await docs(['list', '--json'])).stdout)).toHaveLength(2);
    expect(JSON.parse((await docs(['search', 'issues', '--json'])).stdout)).toEqual([]);
  });

  it('says when a file was already added', async () => {
    await docs(['add', 'notes.md']);
    const again = await docs(['add', 'notes.md']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/doc_\S+ {2}already added: Meeting Notes/);
  });

  it('reports refused files clearly, adds the rest, and exits non-zero', async () => {
    writeFileSync(join(dir, 'fake.pdf'), 'not a pdf at all');
    const result = await docs(['add', 'fake.pdf', 'notes.md', 'missing.txt']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('fake.pdf: the name says a PDF but the content is plain text');
    expect(result.stderr).toContain('missing.txt: no such file');
    expect(result.stderr).toContain('1 added, 2 failed');
    expect(result.stdout).toContain('added Meeting Notes');
  });

  it('shows progress for large files on stderr', async () => {
    writeFileSync(join(dir, 'big.txt'), 'lorem ipsum dolor sit amet '.repeat(50_000));
    const result = await docs(['add', 'big.txt']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('adding big.txt: reading 1.3 MB');
    expect(result.stderr).toMatch(/adding big\.txt: indexing 0\/\d+ chunks/);
  });

  it("keeps users apart: another user's id cannot be removed or searched", async () => {
    const [document] = JSON.parse((await docs(['add', 'notes.md', '--json'])).stdout);
    const other = await docs(['rm', document.id], 'someone-else');
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`no document with id "${document.id}"`);
    expect(JSON.parse((await docs(['search', 'audit', '--json'], 'someone-else')).stdout)).toEqual([]);
    expect(JSON.parse((await docs(['list', '--json'], 'someone-else')).stdout)).toEqual([]);
  });

  it('explains usage mistakes with exit code 2', async () => {
    expect((await docs([])).code).toBe(2);
    expect((await docs(['frobnicate'])).stderr).toContain('unknown command "frobnicate"');
    expect((await docs(['add'])).stderr).toContain('docs add needs at least one FILE');
    expect((await docs(['search'])).code).toBe(2);
    expect((await docs(['search', 'x', '--limit', 'lots'])).stderr).toContain(
      '--limit must be a whole number',
    );
    expect((await docs(['search', 'x', '--type', 'docx'])).stderr).toContain('--type "docx" is not one of');
    expect((await docs(['rm'])).code).toBe(2);
  });
});
