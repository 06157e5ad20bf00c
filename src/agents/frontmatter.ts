import { parse as parseYaml } from 'yaml';
import { UserError } from '../core/errors.ts';

/** A Markdown file split into its YAML front matter (parsed) and its body. */
export interface FrontMatterDocument {
  attributes: Record<string, unknown>;
  body: string;
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/** Splits and parses; throws with a message that says what is wrong with the front matter. */
export function parseFrontMatter(text: string): FrontMatterDocument {
  const match = text.match(FRONT_MATTER);
  if (!match)
    throw new UserError(
      'definition_invalid',
      'no front matter: the file must start with a "---" line, YAML fields, and another "---"',
    );
  let attributes: unknown;
  try {
    attributes = parseYaml(match[1] ?? '') ?? {};
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
  return { attributes: attributes as Record<string, unknown>, body: (match[2] ?? '').trim() };
}
