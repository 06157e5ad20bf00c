import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { ApiName } from '../http/endpoints.ts';
import {
  apiBase,
  callApi,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  ToolCallError,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

const MAX_ROWS = 50;

const sparqlResults = z.object({
  head: z.object({ vars: z.array(z.string()).default([]) }),
  results: z
    .object({
      bindings: z.array(z.record(z.string(), z.object({ type: z.string(), value: z.string() }).loose())),
    })
    .optional(),
  boolean: z.boolean().optional(),
});

/**
 * Runs a read-only SPARQL query against a public endpoint and returns its rows as plain objects (first
 * 50). Updates are refused here as well as by the endpoints themselves.
 */
function sparqlTool(
  deps: NetworkToolDeps,
  options: { name: 'wikidata_sparql' | 'dbpedia_sparql'; api: ApiName; label: string; description: string },
) {
  return defineTool({
    name: options.name,
    family: 'knowledge',
    description: options.description,
    input: z.object({ query: z.string().min(1).max(8_000).describe('A SPARQL SELECT or ASK query') }),
    toModelOutput: asUntrusted(options.name),
    async execute({ query }, context) {
      if (/\b(INSERT|DELETE|LOAD|CLEAR|DROP|CREATE)\s+(DATA|WHERE|GRAPH|SILENT|\{)/i.test(query)) {
        throw new ToolCallError('Only read queries (SELECT, ASK, CONSTRUCT, DESCRIBE) are allowed.');
      }
      const base = apiBase(deps, options.api);
      return callApi(options.label, async () => {
        const url = withQuery(`${base}/sparql`, { query, format: 'json' });
        const { json, response } = await fetchJson(deps, options.name, url, {
          signal: context.signal,
          headers: { accept: 'application/sparql-results+json' },
          timeoutMs: 30_000,
        });
        const parsed = sparqlResults.parse(json);
        if (parsed.boolean !== undefined) return { boolean: parsed.boolean, meta: metaOf(response) };
        const bindings = parsed.results?.bindings ?? [];
        const rows = bindings
          .slice(0, MAX_ROWS)
          .map((binding) =>
            Object.fromEntries(Object.entries(binding).map(([key, cell]) => [key, cell.value])),
          );
        return {
          vars: parsed.head.vars,
          rows,
          rowCount: bindings.length,
          ...(bindings.length > MAX_ROWS
            ? { truncated: `showing ${MAX_ROWS} of ${bindings.length} rows; add LIMIT` }
            : {}),
          meta: metaOf(response),
        };
      });
    },
  });
}

export function wikidataSparqlTool(deps: NetworkToolDeps) {
  return sparqlTool(deps, {
    name: 'wikidata_sparql',
    api: 'WIKIDATA_SPARQL',
    label: 'Wikidata Query Service',
    description:
      'Run a SPARQL query on Wikidata (query.wikidata.org). Prefixes wd:, wdt:, rdfs:, schema: are predefined; ' +
      'use SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } for labels and always add LIMIT.',
  });
}

export function dbpediaSparqlTool(deps: NetworkToolDeps) {
  return sparqlTool(deps, {
    name: 'dbpedia_sparql',
    api: 'DBPEDIA',
    label: 'DBpedia',
    description:
      'Run a SPARQL query on DBpedia (structured data extracted from Wikipedia infoboxes), e.g. with ' +
      'dbo:, dbr:, rdfs: prefixes. Always add LIMIT. Prefer wikidata_sparql when both could answer.',
  });
}
