import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pdfBomb, xlsxBomb } from '../fixtures/documents/bombs.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

/** `cadre docs add FILE --json` in this process, with the file written to a fresh CADRE_HOME. */
async function docsAdd(name: string, bytes: Uint8Array | string, config?: object) {
  const home = tempHome();
  const file = join(home, name);
  writeFileSync(file, bytes);
  if (config) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  return cadreInProcess(['docs', 'add', '--json', file], { CADRE_HOME: home }, home);
}

describe('hostile documents are refused at a named limit, and the process goes on', () => {
  it('an XLSX whose sheet unpacks to 110 MB stops at 100 MB of unpacked data', async () => {
    const result = await docsAdd('bomb.xlsx', await xlsxBomb(110));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /bomb\.xlsx: the workbook unpacks to more than the limit of 100 MB \(stopped there\) \(limit documents\.maxUnpackedMegabytes in config\)/,
    );
  });

  it('an XLSX whose headers lie about its sizes is counted by what it really unpacks to', async () => {
    const result = await docsAdd('liar.xlsx', await xlsxBomb(110, true));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/liar\.xlsx: the workbook unpacks to more than the limit of 100 MB/);
  });

  it('a 140 KB CSV padded to its widest row stops at the text limit instead of building gigabytes', async () => {
    const csv = `${'a,'.repeat(35_000)}a\n${'a\n'.repeat(35_000)}`;
    const result = await docsAdd('wide.csv', csv);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /wide\.csv: the table comes to more than the limit of 20,000,000 characters \(stopped there\) \(limit documents\.maxTextChars in config\)/,
    );
    expect(result.ms).toBeLessThan(10_000);
  });

  it('a 44 MB one-line CSV is refused by its length before it is split', async () => {
    const result = await docsAdd('line.csv', 'a,'.repeat(22_000_000));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /line\.csv: 44,000,000 characters of text is more than the limit of 20,000,000 \(limit documents\.maxTextChars in config\)/,
    );
  });

  it('an ordinary 500,000-row CSV is added (no stack overflow)', async () => {
    const result = await docsAdd('rows.csv', `n\n${'1\n'.repeat(500_000)}`);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)[0]).toMatchObject({ filename: 'rows.csv', pages: 1 });
  });

  it('a PDF compression bomb stops at 100 MB of unpacked data, not "needs OCR"', async () => {
    const result = await docsAdd('bomb.pdf', await pdfBomb(150));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /bomb\.pdf: a compressed stream in the PDF unpacks to more than the limit of 100 MB \(stopped there\) \(limit documents\.maxUnpackedMegabytes in config\)/,
    );
    expect(result.stderr).not.toMatch(/OCR/);
  });
});

describe('document limits from config.json', () => {
  it('documents.* in config replace the defaults, and the error names the limit', async () => {
    const csv = `${'a,'.repeat(200)}a\n${'a\n'.repeat(200)}`;
    const result = await docsAdd('small-wide.csv', csv, { documents: { maxTextChars: 10_000 } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /small-wide\.csv: the table comes to more than the limit of 10,000 characters/,
    );
    const xlsx = await docsAdd('bomb.xlsx', await xlsxBomb(3), { documents: { maxUnpackedMegabytes: 2 } });
    expect(xlsx.stderr).toMatch(/unpacks to more than the limit of 2 MB/);
    const big = await docsAdd('big.txt', 'x'.repeat(2 * 1024 * 1024), { documents: { maxFileMegabytes: 1 } });
    expect(big.stderr).toMatch(/big\.txt: 2\.0 MB is more than the limit of 1\.0 MB/);
  });
});

describe('the parse worker memory cap', () => {
  it('stops a parser that needs more memory than parseMemoryMb, naming the limit', async () => {
    const { ingestDocument } = await import('../../src/documents/ingest.ts');
    const { openSqliteStore } = await import('../../src/store/sqlite/sqlite-store.ts');
    const html = `<html><body>${'<div><p>word <b>bold</b> <i>it</i></p></div>'.repeat(200_000)}</body></html>`;
    await expect(
      ingestDocument(
        openSqliteStore(':memory:').documents,
        'local',
        { filename: 'heavy.html', bytes: new TextEncoder().encode(html) },
        { limits: { parseMemoryMb: 32 } },
      ),
    ).rejects.toThrow(
      /heavy\.html: reading it needed more than 32 MB of memory and was stopped \(limit documents\.parseMemoryMb in config\)/,
    );
  });
});
