import type { ParsedDocument } from './parsed-document.ts';

/**
 * Markdown stays Markdown (models read it well); a YAML front matter `title:` or the first `# ` heading
 * gives the title.
 */
export function parseMarkdown(text: string): ParsedDocument {
  const normalized = normalizeNewlines(text);
  const frontMatter = /^---\n([\s\S]*?)\n---\n/.exec(normalized);
  const fromFrontMatter = frontMatter?.[1]
    ? /^title:\s*["']?(.+?)["']?\s*$/m.exec(frontMatter[1])?.[1]
    : undefined;
  const heading = /^#\s+(.+?)\s*#*\s*$/m.exec(normalized)?.[1];
  const title = fromFrontMatter ?? heading;
  return { ...(title ? { title } : {}), pages: [normalized.trim()] };
}

/** Plain text: form feeds, where present, separate pages (as `pdftotext` writes them). */
export function parsePlainText(text: string): ParsedDocument {
  const pages = normalizeNewlines(text)
    .split('\f')
    .map((page) => page.trim());
  return { pages: pages.some(Boolean) ? pages : [''] };
}

export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}
