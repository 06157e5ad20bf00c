import type { CadreTool } from '../../core/tool.ts';
import type { NetworkToolDeps } from '../http/tool-support.ts';
import { arxivSearchTool } from './arxiv.ts';
import { docsLookupTool } from './docs-lookup.ts';
import { duckduckgoInstantTool } from './duckduckgo-instant.ts';
import { nasaApodTool } from './nasa.ts';
import { dbpediaSparqlTool, wikidataSparqlTool } from './sparql.ts';
import { stackexchangeSearchTool } from './stackexchange.ts';
import { wikidataSearchTool } from './wikidata.ts';
import { wikipediaSearchTool, wikipediaSummaryTool } from './wikipedia.ts';
import { wolframQueryTool } from './wolfram.ts';

/** The knowledge family: public knowledge APIs, each a thin typed client. */
export function knowledgeTools(deps: NetworkToolDeps): CadreTool[] {
  return [
    wikipediaSearchTool(deps),
    wikipediaSummaryTool(deps),
    wikidataSearchTool(deps),
    wikidataSparqlTool(deps),
    dbpediaSparqlTool(deps),
    arxivSearchTool(deps),
    stackexchangeSearchTool(deps),
    wolframQueryTool(deps),
    nasaApodTool(deps),
    duckduckgoInstantTool(deps),
    docsLookupTool(deps),
  ];
}
