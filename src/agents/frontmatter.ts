import { createRequire } from 'node:module';
import { UserError } from '../core/errors.ts';
import { FrontMatterCache } from './front-matter-cache.ts';

/** A Markdown file split into its YAML front matter (parsed) and its body. */
export interface FrontMatterDocument {
  attributes: Record<string, unknown>;
  body: string;
}

/**
 * The YAML parser, loaded on the first front matter the cache has not seen (72 modules, ~10 ms of a start;
 * `yaml` is CommonJS under Node, so it loads synchronously).
 */
let yaml: typeof import('yaml') | undefined;
const parseYaml = (text: string): unknown => {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yaml.parse(text);
};

/** Front matter parsed before, by its text: every command reads the same definitions. */
const parsed = FrontMatterCache.besideCompileCache();

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/** Splits and parses; throws with a message that says what is wrong with the front matter. */
export function parseFrontMatter(text: string): FrontMatterDocument {
  const match = text.match(FRONT_MATTER);
  if (!match)
    throw new UserError(
      'definition_invalid',
      'no front matter: the file must start with a "---" line, YAML fields, and another "---"',
    );
  const yamlText = match[1] ?? '';
  const body = (match[2] ?? '').trim();
  const known = parsed.get(yamlText);
  if (known) return { attributes: known, body };
  let attributes: unknown;
  try {
    attributes = parseYaml(yamlText) ?? {};
  } catch (error) {
    // The parser counts lines from the front matter's first; the person's editor counts from the "---".
    const first = (error as Error).message.split('\n')[0]!.replace(/:\s*$/, '');
    const where = first.replace(
      /at line (\d+), column (\d+)$/,
      (_, line: string, column: string) => `at line ${Number(line) + 1}, column ${column}`,
    );
    throw new UserError('definition_invalid', `front matter is not valid YAML: ${where}`);
  }
  if (typeof attributes !== 'object' || Array.isArray(attributes) || attributes === null) {
    throw new UserError('definition_invalid', 'front matter must be a set of "field: value" lines');
  }
  parsed.set(yamlText, attributes as Record<string, unknown>);
  return { attributes: attributes as Record<string, unknown>, body };
}
