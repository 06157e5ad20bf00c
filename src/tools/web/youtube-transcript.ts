import type { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { bodyText } from '../http/http-client.ts';
import {
  apiBase,
  callApi,
  decodeEntities,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  ToolCallError,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

const MAX_TRANSCRIPT_CHARS = 30_000;
/** The Android client's player response still lists caption tracks with plain timedtext URLs. */
const PLAYER_CLIENT = { clientName: 'ANDROID', clientVersion: '20.10.38', hl: 'en' };

/** The 11-character video id in any common YouTube URL form, or a bare id. */
export function youtubeVideoId(input: string): string | undefined {
  const trimmed = input.trim();
  if (/^[\w-]{11}$/.test(trimmed)) return trimmed;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^(www|m|music)\./, '');
  let id: string | null | undefined;
  if (host === 'youtu.be') id = url.pathname.split('/')[1];
  else if (host === 'youtube.com' || host === 'youtube-nocookie.com') {
    id = url.searchParams.get('v') ?? /^\/(?:shorts|embed|live|v)\/([\w-]{11})/.exec(url.pathname)?.[1];
  }
  return id && /^[\w-]{11}$/.test(id) ? id : undefined;
}

const playerResponse = z
  .object({
    playabilityStatus: z.object({ status: z.string(), reason: z.string().optional() }).loose().optional(),
    videoDetails: z
      .object({
        title: z.string().optional(),
        author: z.string().optional(),
        lengthSeconds: z.string().optional(),
      })
      .loose()
      .optional(),
    captions: z
      .object({
        playerCaptionsTracklistRenderer: z
          .object({
            captionTracks: z
              .array(
                z
                  .object({
                    baseUrl: z.string(),
                    languageCode: z.string().default(''),
                    kind: z.string().optional(),
                  })
                  .loose(),
              )
              .default([]),
          })
          .loose(),
      })
      .loose()
      .optional(),
  })
  .loose();

let xml: XMLParser | undefined;
/** The captions parser, made at the first transcript: its XML library is not start-up's. */
async function captionsParser(): Promise<XMLParser> {
  const { XMLParser } = await import('fast-xml-parser');
  xml ??= new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    isArray: (name) => name === 'text' || name === 'p' || name === 's',
  });
  return xml;
}

/** Timed text (format 1 `<transcript><text start>` or format 3 `<timedtext><body><p t>`) → `[m:ss] line` lines. */
export async function parseTimedText(source: string): Promise<string[]> {
  const document = (await captionsParser()).parse(source) as any;
  const flatten = (node: any): string => {
    if (typeof node === 'string') return node;
    if (node == null) return '';
    const own = typeof node['#text'] === 'string' ? node['#text'] : '';
    const spans = Array.isArray(node.s) ? node.s.map(flatten).join('') : '';
    return own + spans;
  };
  const lines: Array<[number, string]> = [];
  for (const item of document?.transcript?.text ?? [])
    lines.push([Number(item['@_start'] ?? 0), flatten(item)]);
  for (const item of document?.timedtext?.body?.p ?? [])
    lines.push([Number(item['@_t'] ?? 0) / 1000, flatten(item)]);
  return lines
    .map(
      ([seconds, text]) =>
        [seconds, decodeEntities(decodeEntities(text)).replace(/\s+/g, ' ').trim()] as const,
    )
    .filter(([, text]) => text)
    .map(([seconds, text]) => `[${timestamp(seconds)}] ${text}`);
}

function timestamp(seconds: number): string {
  const whole = Math.floor(seconds);
  const minutes = Math.floor(whole / 60);
  const hours = Math.floor(minutes / 60);
  const ss = String(whole % 60).padStart(2, '0');
  return hours ? `${hours}:${String(minutes % 60).padStart(2, '0')}:${ss}` : `${minutes}:${ss}`;
}

/** A YouTube video's captions as timestamped text (manual English captions first, then auto-generated). */
export function youtubeTranscriptTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'youtube_transcript',
    family: 'web',
    description:
      "Get a YouTube video's transcript (its captions) as timestamped text, with the video's title and channel.",
    input: z.object({ url: z.string().min(1).max(500).describe('A YouTube video URL or id') }),
    toModelOutput: asUntrusted('youtube_transcript'),
    async execute({ url }, context) {
      const videoId = youtubeVideoId(url);
      if (!videoId) throw new ToolCallError(`"${url}" is not a YouTube video URL.`);
      const base = apiBase(deps, 'YOUTUBE');
      return callApi('YouTube', async () => {
        const { json, response } = await fetchJson(
          deps,
          'youtube_transcript',
          `${base}/youtubei/v1/player?prettyPrint=false`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ context: { client: PLAYER_CLIENT }, videoId }),
            signal: context.signal,
          },
        );
        const player = playerResponse.parse(json);
        const status = player.playabilityStatus?.status;
        if (status && status !== 'OK') {
          throw new ToolCallError(
            `YouTube video ${videoId} is not available (${player.playabilityStatus?.reason ?? status}).`,
          );
        }
        const tracks = player.captions?.playerCaptionsTracklistRenderer.captionTracks ?? [];
        const track =
          tracks.find((item) => item.languageCode.startsWith('en') && item.kind !== 'asr') ??
          tracks.find((item) => item.languageCode.startsWith('en')) ??
          tracks[0];
        if (!track) throw new ToolCallError(`YouTube video ${videoId} has no captions to transcribe.`);
        // Caption URLs come from the response: trusted only on the configured endpoint's own origin.
        const captionUrl = new URL(track.baseUrl.replace(/&fmt=[^&]*/, ''), base);
        const captions = await deps.http.request({
          url: captionUrl.toString(),
          trust: captionUrl.origin === new URL(base).origin ? 'endpoint' : 'guarded',
          accept: ['text/xml', 'application/xml', 'text/html'],
          signal: context.signal,
          cache: { namespace: 'youtube_transcript', ttlSeconds: deps.cacheTtl('youtube_transcript') },
        });
        const lines = await parseTimedText(bodyText(captions));
        if (lines.length === 0) throw new ToolCallError(`YouTube returned empty captions for ${videoId}.`);
        const transcript = lines.join('\n');
        return {
          videoId,
          url: `https://www.youtube.com/watch?v=${videoId}`,
          ...(player.videoDetails?.title ? { title: player.videoDetails.title } : {}),
          ...(player.videoDetails?.author ? { channel: player.videoDetails.author } : {}),
          language: track.languageCode,
          ...(track.kind === 'asr' ? { autoGenerated: true } : {}),
          transcript: transcript.slice(0, MAX_TRANSCRIPT_CHARS),
          ...(transcript.length > MAX_TRANSCRIPT_CHARS ? { truncated: true } : {}),
          meta: metaOf(response, captions),
        };
      });
    },
  });
}
