import { describe, expect, it } from 'vitest';
import { SqlHttpCache } from '../../store/sql/http-cache.ts';
import { openDatabase } from '../../store/sqlite/database.ts';
import { SqliteSqlDatabase } from '../../store/sqlite/sql-port.ts';
import { createToolRegistry } from '../index.ts';
import { createNetworkDeps, DEFAULT_CACHE_TTL } from './network-deps.ts';

const NETWORK_TOOLS = [
  'web_search',
  'web_fetch',
  'image_search',
  'youtube_transcript',
  'wikipedia_search',
  'wikipedia_summary',
  'wikidata_search',
  'wikidata_sparql',
  'dbpedia_sparql',
  'arxiv_search',
  'stackexchange_search',
  'wolfram_query',
  'nasa_apod',
  'duckduckgo_instant',
  'docs_lookup',
];

describe('network tool wiring', () => {
  it('registers every web and knowledge tool with the built-ins, web and knowledge families', () => {
    const registry = createToolRegistry({
      env: {},
      httpCache: new SqlHttpCache(new SqliteSqlDatabase(openDatabase(':memory:'))),
      workspaceRoot: process.cwd(),
    });
    for (const name of NETWORK_TOOLS) expect(registry.has(name), name).toBe(true);
    expect(new Set(NETWORK_TOOLS.map((name) => registry.get(name)?.family))).toEqual(
      new Set(['web', 'knowledge']),
    );
    expect(registry.unavailable('wolfram_query')?.enableWith).toBe('WOLFRAM_APP_ID');
    expect(registry.unavailable('web_search')).toBeUndefined();
  });

  it('takes cache TTLs from settings, falling back to each tool default', () => {
    const deps = createNetworkDeps({ env: {}, settings: { cacheTtl: { web_search: 60, web_fetch: 0 } } });
    expect(deps.cacheTtl('web_search')).toBe(60);
    expect(deps.cacheTtl('web_fetch')).toBe(0);
    expect(deps.cacheTtl('arxiv_search')).toBe(DEFAULT_CACHE_TTL.arxiv_search);
  });
});
