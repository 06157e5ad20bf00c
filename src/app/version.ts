import { readFileSync } from 'node:fs';

/** Cadre's version, from package.json: reported by `--version`, `/health` and to MCP peers. */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
