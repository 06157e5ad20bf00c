import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import type { ParsedDocument } from './parsed-document.ts';

const BLOCKS = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'DD',
  'DIV',
  'DL',
  'DT',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'TABLE',
  'TR',
  'UL',
]);
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'IFRAME']);

/**
 * The readable text of an HTML page: Readability picks the article (dropping navigation, ads and
 * footers); when it finds none (short or unusual pages), the whole body is used. Block elements become
 * paragraphs and headings keep a Markdown `#` so the structure survives.
 */
export function parseHtml(html: string): ParsedDocument {
  const { document } = parseHTML(html);
  const pageTitle = document.querySelector('title')?.textContent?.trim();
  let root: any = document.body ?? document.documentElement;
  let title = pageTitle;
  try {
    const article = new Readability(parseHTML(html).document as any, { charThreshold: 200 }).parse();
    if (article?.content && (article.textContent ?? '').trim().length > 200) {
      root = parseHTML(`<html><body>${article.content}</body></html>`).document.body;
      title = article.title?.trim() || pageTitle;
    }
  } catch {
    // Readability gives up on some markup; the whole body is the fallback.
  }
  const text = tidy(textOf(root));
  return { ...(title ? { title } : {}), pages: [text] };
}

function textOf(node: any): string {
  if (!node) return '';
  if (node.nodeType === 3) return node.textContent.replace(/\s+/g, ' ');
  if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return '';
  const tag = String(node.tagName ?? '').toUpperCase();
  if (SKIPPED.has(tag)) return '';
  if (tag === 'BR') return '\n';
  if (tag === 'PRE') return `\n\n${node.textContent}\n\n`;
  let inner = '';
  for (const child of node.childNodes ?? []) inner += textOf(child);
  if (/^H[1-6]$/.test(tag)) return `\n\n${'#'.repeat(Number(tag[1]))} ${inner.trim()}\n\n`;
  if (tag === 'LI') return `\n- ${inner.trim()}\n`;
  if (tag === 'TD' || tag === 'TH') return ` ${inner.trim()} |`;
  if (tag === 'TR') return `\n|${inner}\n`;
  if (BLOCKS.has(tag)) return `\n\n${inner}\n\n`;
  return inner;
}

function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
