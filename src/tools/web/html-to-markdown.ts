import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/**
 * HTML page → readable Markdown: drop what a reader never sees (scripts, styles, hidden elements, where
 * pages like to hide instructions for models), make links absolute, keep the main article with
 * Readability, and convert it with turndown.
 */
export interface ReadablePage {
  title: string;
  byline?: string;
  siteName?: string;
  markdown: string;
}

const INVISIBLE = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  '[hidden]',
  '[aria-hidden="true"]',
  '[style*="display:none"]',
  '[style*="display: none"]',
  '[style*="visibility:hidden"]',
  '[style*="visibility: hidden"]',
  '[style*="font-size:0"]',
  '[style*="font-size: 0"]',
];

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
});
turndown.remove(['script', 'style', 'noscript', 'iframe', 'form', 'button', 'input', 'select', 'textarea']);

export function htmlToMarkdown(html: string, pageUrl: string): ReadablePage {
  const { document } = parseHTML(html);
  for (const element of [...document.querySelectorAll(INVISIBLE.join(','))]) element.remove();
  absolutize(document, pageUrl);
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  const body = document.body?.innerHTML ?? '';
  let article: ReturnType<Readability['parse']> = null;
  try {
    article = new Readability(document as unknown as Document, { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  const markdown = turndown
    .turndown(article?.content || body || '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return {
    title: article?.title?.trim() || fallbackTitle,
    ...(article?.byline ? { byline: article.byline.trim() } : {}),
    ...(article?.siteName ? { siteName: article.siteName.trim() } : {}),
    markdown,
  };
}

function absolutize(document: ReturnType<typeof parseHTML>['document'], pageUrl: string): void {
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const element of [...document.querySelectorAll(selector)]) {
      const value = element.getAttribute(attribute);
      if (!value) continue;
      try {
        const absolute = new URL(value, pageUrl);
        if (absolute.protocol === 'http:' || absolute.protocol === 'https:') {
          element.setAttribute(attribute, absolute.toString());
        } else {
          element.removeAttribute(attribute);
        }
      } catch {
        element.removeAttribute(attribute);
      }
    }
  }
}
