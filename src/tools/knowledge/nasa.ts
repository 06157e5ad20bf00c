import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { apiBase, callApi, getJson, metaOf, type NetworkToolDeps, withQuery } from '../http/tool-support.ts';
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

/** NASA's Astronomy Picture of the Day for a date (today by default). Needs `NASA_API_KEY`. */
export function nasaApodTool(deps: NetworkToolDeps) {
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
    unavailable: () =>
      deps.env.NASA_API_KEY
        ? undefined
        : {
            reason: 'no NASA API key is set (free at api.nasa.gov; DEMO_KEY works for trying)',
            enableWith: 'NASA_API_KEY',
          },
    toModelOutput: asUntrusted('nasa_apod'),
    async execute({ date }, context) {
      const base = apiBase(deps, 'NASA');
      return callApi('NASA APOD', async () => {
        const url = withQuery(`${base}/planetary/apod`, {
          api_key: deps.env.NASA_API_KEY ?? 'DEMO_KEY',
          date,
          thumbs: 'true',
        });
        const { json, response } = await getJson(deps, 'nasa_apod', url, { signal: context.signal });
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
