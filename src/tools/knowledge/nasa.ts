import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { type HostRate, RateLimiter } from '../http/rate-limiter.ts';
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

const apod = z.object({
  date: z.string(),
  title: z.string(),
  explanation: z.string().default(''),
  url: z.string().optional(),
  hdurl: z.string().optional(),
  media_type: z.string().default('image'),
  copyright: z.string().optional(),
  thumbnail_url: z.string().optional(),
});

/**
 * NASA's public `DEMO_KEY` allows 30 requests an hour (and 50 a day) per address. Without a key of its
 * own, Cadre stays under that: a burst of 10, then one request every three minutes (at most 30 in any
 * hour), and it refuses rather than waits beyond that (a tool call should not sit for minutes).
 */
export const NASA_DEMO_KEY_RATE: HostRate = { perSecond: 20 / 3600, burst: 10 };

/**
 * NASA's Astronomy Picture of the Day for a date (today by default). Uses `NASA_API_KEY`, or NASA's
 * public `DEMO_KEY` within its low rate limit when none is set.
 */
export function nasaApodTool(
  deps: NetworkToolDeps,
  options: { demoKeyRate?: HostRate; now?: () => number } = {},
) {
  const demoKeyLimiter = new RateLimiter({
    defaultRate: options.demoKeyRate ?? NASA_DEMO_KEY_RATE,
    ...(options.now ? { now: options.now } : {}),
  });
  return defineTool({
    name: 'nasa_apod',
    family: 'knowledge',
    description:
      "NASA's Astronomy Picture of the Day: title, explanation and image URL for a date (YYYY-MM-DD, " +
      'from 1995-06-16; today when omitted).',
    input: z.object({
      date: z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD')
        .optional(),
    }),
    toModelOutput: asUntrusted('nasa_apod'),
    async execute({ date }, context) {
      const base = apiBase(deps, 'NASA');
      const key = deps.env.NASA_API_KEY || 'DEMO_KEY';
      if (key === 'DEMO_KEY') {
        const waitMs = demoKeyLimiter.tryTake('DEMO_KEY');
        if (waitMs > 0) {
          throw new ToolCallError(
            `NASA's public DEMO_KEY allows few requests (Cadre spends at most ${Math.round((options.demoKeyRate ?? NASA_DEMO_KEY_RATE).perSecond * 3600)} ` +
              `an hour) and they are used up; try again in ${Math.ceil(waitMs / 1000)} s, or set ` +
              'NASA_API_KEY (free at api.nasa.gov).',
            { retryAfterMs: Math.ceil(waitMs) },
          );
        }
      }
      return callApi('NASA APOD', async () => {
        const url = withQuery(`${base}/planetary/apod`, {
          api_key: key,
          date,
          thumbs: 'true',
        });
        const { json, response } = await fetchJson(deps, 'nasa_apod', url, { signal: context.signal });
        const picture = apod.parse(json);
        return {
          date: picture.date,
          title: picture.title,
          mediaType: picture.media_type,
          explanation: picture.explanation,
          ...(picture.url ? { url: picture.url } : {}),
          ...(picture.hdurl ? { hdurl: picture.hdurl } : {}),
          ...(picture.thumbnail_url ? { thumbnail: picture.thumbnail_url } : {}),
          ...(picture.copyright ? { copyright: picture.copyright.trim() } : {}),
          page: `https://apod.nasa.gov/apod/ap${picture.date.slice(2).replace(/-/g, '')}.html`,
          meta: metaOf(response),
        };
      });
    },
  });
}
