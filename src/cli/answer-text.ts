import { withoutControls } from './terminal-text.ts';

/** Where Markdown is wrapped when the terminal reports no width. */
const UNKNOWN_WIDTH = 100;

/**
 * An answer as it goes to stdout, with its final newline. On a terminal its Markdown is drawn (headings,
 * emphasis, lists, code blocks, tables, links) by marked-terminal, after any control sequence the model
 * wrote was removed; anything else (a pipe, a file) gets the text as the model wrote it.
 */
export async function answerText(
  text: string,
  stream: { isTTY?: boolean; columns?: number },
): Promise<string> {
  if (!stream.isTTY) return `${text}\n`;
  // Loaded only to draw on a terminal, once the answer is there (cli-highlight and its grammars were ~10%
  // of a start-up): a pipe, a file or `--json` never loads them, and no question waits for them.
  const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
  const width = stream.columns && stream.columns > 20 ? stream.columns - 1 : UNKNOWN_WIDTH;
  const marked = new Marked();
  marked.use(markedTerminal({ width, reflowText: true, tab: 2, emoji: false }));
  const drawn = marked.parse(withoutControls(text), { async: false });
  return `${drawn.replace(/\n+$/, '')}\n`;
}
