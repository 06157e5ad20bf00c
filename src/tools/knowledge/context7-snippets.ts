/** One fenced code block from Context7's documentation, with the snippet it came from. */
export interface CodeExample {
  title?: string;
  source?: string;
  language?: string;
  code: string;
}

const FENCE = /^(```|~~~)([^\n`]*)\n([\s\S]*?)^\1[ \t]*$/gm;
const SNIPPET_SEPARATOR = /^-{10,}[ \t]*$/m;

/**
 * Splits Context7's text answer (snippets of "### Title", "Source: URL", prose and fenced code, separated
 * by lines of dashes) into the prose and the code examples (seed 004's `content` and `codeExamples`), so a
 * model can take the code without wading through prose, and the prose without the code.
 */
export function splitDocs(text: string): { prose: string; codeExamples: CodeExample[] } {
  const codeExamples: CodeExample[] = [];
  const proseParts: string[] = [];
  for (const snippet of text.split(SNIPPET_SEPARATOR)) {
    const title = snippet.match(/^#{1,6}\s+(.+)$/m)?.[1]?.trim();
    const source = snippet.match(/^Source:\s*(\S+)/m)?.[1];
    const prose = snippet
      .replace(FENCE, (_block, _fence, language: string, code: string) => {
        codeExamples.push({
          ...(title ? { title } : {}),
          ...(source ? { source } : {}),
          ...(language.trim() ? { language: language.trim() } : {}),
          code: code.replace(/\n$/, ''),
        });
        return '';
      })
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    if (prose) proseParts.push(prose);
  }
  return { prose: proseParts.join('\n\n'), codeExamples };
}
