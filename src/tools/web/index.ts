import type { CadreTool } from '../../core/tool.ts';
import type { NetworkToolDeps } from '../http/tool-support.ts';
import { imageSearchTool } from './image-search.ts';
import { webFetchTool } from './web-fetch.ts';
import { webSearchTool } from './web-search.ts';
import { youtubeTranscriptTool } from './youtube-transcript.ts';

/** The web family: search, fetch, images, video transcripts. */
export function webTools(deps: NetworkToolDeps): CadreTool[] {
  return [webSearchTool(deps), webFetchTool(deps), imageSearchTool(deps), youtubeTranscriptTool(deps)];
}
