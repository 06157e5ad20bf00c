/**
 * Markdown that is still being written, made safe to render: a `**` whose closing marker has not arrived
 * yet would show as two raw asterisks until it does. As streaming-Markdown renderers do, the open
 * markers of the text so far are closed at its end (bold, italics, strike-through, inline code, a code
 * fence, a link's URL), and a marker with nothing after it yet is left out. The finished text is
 * rendered as written.
 */

/** Inline markers, longest first, so `**` is not read as two `*`. */
const MARKERS = ['**', '__', '~~', '*', '_', '`'] as const;

export function closeOpenMarkdown(text: string): string {
  const fences = text.match(/^ {0,3}(```|~~~)/gm) ?? [];
  if (fences.length % 2 === 1) return `${text.replace(/\n?$/, '\n')}${fences.at(-1)!.trim()}`;
  // Only the paragraph being written can hold an open marker: earlier ones are finished.
  const start = text.lastIndexOf('\n\n') + 1;
  const closed = closeInline(text.slice(start));
  return text.slice(0, start) + closed;
}

function closeInline(paragraph: string): string {
  const open: Array<{ marker: string; at: number }> = [];
  let index = 0;
  while (index < paragraph.length) {
    const char = paragraph[index]!;
    if (char === '\\') {
      index += 2;
      continue;
    }
    const inCode = open.at(-1)?.marker === '`';
    const marker = MARKERS.find((each) => paragraph.startsWith(each, index));
    if (!marker || (inCode && marker !== '`') || !isMarker(paragraph, index, marker)) {
      index++;
      continue;
    }
    if (open.at(-1)?.marker === marker) open.pop();
    else if (!inCode) open.push({ marker, at: index });
    index += marker.length;
  }
  let result = paragraph;
  for (const { marker, at } of open.reverse()) {
    // Nothing written after the marker yet: drop it rather than render an empty pair.
    if (!result.slice(at + marker.length).trim()) result = result.slice(0, at).trimEnd();
    else result = `${result.trimEnd()}${marker}`;
  }
  // A link whose URL is still arriving: close it, so it is not shown as raw brackets meanwhile.
  if (/\[[^\]\n]*\]\([^)\s]*$/.test(result)) result = `${result})`;
  return result;
}

/**
 * Whether the characters at `index` act as an emphasis marker: a `*` bullet at the start of a line is
 * not one, nor an `_` inside a word (snake_case), nor a `*` with spaces on both sides (a product).
 */
function isMarker(text: string, index: number, marker: string): boolean {
  const before = text[index - 1] ?? '\n';
  const after = text[index + marker.length] ?? '';
  if (marker === '`') return true;
  if (/[ \t]/.test(before) && /[ \t]/.test(after)) return false;
  if (marker === '*' || marker === '**') {
    const lineStart = text.lastIndexOf('\n', index - 1) + 1;
    if (marker === '*' && /^[ \t]*$/.test(text.slice(lineStart, index)) && after === ' ') return false;
  }
  if (marker.startsWith('_') && /\w/.test(before) && /\w/.test(after)) return false;
  return true;
}
