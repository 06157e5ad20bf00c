/**
 * Markdown cut into its top-level blocks, so a growing answer is parsed and drawn incrementally: the
 * blocks already complete keep the same text (and are not rendered again), only the last one grows. A
 * block ends at a blank line outside a code fence (or `$$` display math) when the next line starts at the margin (an indented
 * line continues a list item or an indented block). Text with reference definitions or footnotes
 * (`[id]: …`, `[^1]: …`), whose meaning spans blocks, is kept whole.
 */

/** Whether `text` uses definitions that blocks elsewhere refer to. */
const SPANNING = /^ {0,3}\[[^\]\n]+\]:/m;
/** A code fence, or a `$$` line opening or closing display math (which may hold blank lines too). */
const FENCE = /^ {0,3}(`{3,}|~{3,}|\$\$)/;

/** The blocks of `text`, in order; joined with the blank lines between them they give `text` back. */
export function markdownBlocks(text: string): string[] {
  if (SPANNING.test(text)) return [text];
  const blocks: string[] = [];
  const lines = text.split('\n');
  let start = 0;
  let fence: string | undefined;
  let blank = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim().startsWith(marker))
        fence = undefined;
      continue;
    }
    if (line.trim() === '') {
      blank = true;
      continue;
    }
    if (blank && !/^[ \t]/.test(line) && index > start) {
      blocks.push(lines.slice(start, index).join('\n').trimEnd());
      start = index;
    }
    blank = false;
    // A `$$` line that also closes its math (`$$x$$`) opens nothing.
    if (marker && !(marker === '$$' && line.trim().length > 2 && line.trim().endsWith('$$'))) fence = marker;
  }
  blocks.push(lines.slice(start).join('\n'));
  return blocks.filter((block, index) => block.trim() !== '' || index === blocks.length - 1);
}

/**
 * The blocks of a text that grew from `previous` (whose blocks were `previousBlocks`): only the text from
 * the last previous block on is cut again, so a long answer costs its new part, not its whole length.
 */
export function growBlocks(previous: string, previousBlocks: string[], text: string): string[] {
  if (previousBlocks.length < 2 || !text.startsWith(previous) || SPANNING.test(text))
    return markdownBlocks(text);
  const settled = previousBlocks.slice(0, -1);
  let offset = 0;
  for (const block of settled) {
    const at = text.indexOf(block, offset);
    if (at === -1) return markdownBlocks(text);
    offset = at + block.length;
  }
  const rest = text.slice(offset).replace(/^\n+/, '');
  return [...settled, ...markdownBlocks(rest)];
}
