import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FrontMatterCache } from './front-matter-cache.ts';

const fileIn = () => join(mkdtempSync(join(tmpdir(), 'cadre-fm-')), 'cache.json');

describe('FrontMatterCache', () => {
  it('gives back what another command parsed, by the text it was parsed from', () => {
    const file = fileIn();
    new FrontMatterCache(file).set('name: math\ntools: [calculate]', { name: 'math', tools: ['calculate'] });
    const later = new FrontMatterCache(file);
    expect(later.get('name: math\ntools: [calculate]')).toEqual({ name: 'math', tools: ['calculate'] });
    // An edited file is another text, so never a stale hit.
    expect(later.get('name: math\ntools: [calculate, vault_get]')).toBeUndefined();
  });

  it('gives each caller its own copy', () => {
    const cache = new FrontMatterCache(fileIn());
    cache.set('a: [1]', { a: [1] });
    (cache.get('a: [1]')!.a as number[]).push(2);
    expect(cache.get('a: [1]')).toEqual({ a: [1] });
  });

  it('keeps only what JSON keeps exactly', () => {
    const file = fileIn();
    const cache = new FrontMatterCache(file);
    cache.set('n: .inf', { n: Number.POSITIVE_INFINITY });
    cache.set('d: 2026-01-01', { d: new Date('2026-01-01') });
    expect(cache.get('n: .inf')).toBeUndefined();
    expect(cache.get('d: 2026-01-01')).toBeUndefined();
    expect(new FrontMatterCache(file).get('n: .inf')).toBeUndefined();
  });

  it('reads a corrupt or foreign file as an empty cache, and replaces it', () => {
    const file = fileIn();
    writeFileSync(file, '{not json');
    const cache = new FrontMatterCache(file);
    expect(cache.get('a: 1')).toBeUndefined();
    cache.set('a: 1', { a: 1 });
    expect(Object.values(JSON.parse(readFileSync(file, 'utf8')))).toEqual([{ a: 1 }]);
  });

  it('works in memory when there is no folder for it', () => {
    const cache = new FrontMatterCache(undefined);
    cache.set('a: 1', { a: 1 });
    expect(cache.get('a: 1')).toEqual({ a: 1 });
  });
});
