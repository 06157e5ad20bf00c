import stringWidth from 'string-width';
import { type RunTree, sumTreeUsage } from '../core/index.ts';
import { printableLine, withoutControls } from './terminal-text.ts';

const MARKS: Record<string, string> = {
  running: '◌',
  ok: '✓',
  partial: '◐',
  error: '✗',
  cancelled: '⊘',
  max_turns: '↻',
  timeout: '⧗',
  budget: '$',
  interrupted: '↯',
};

const PLAN_MARKS: Record<string, string> = {
  pending: '[ ]',
  running: '[>]',
  done: '[x]',
  failed: '[!]',
  skipped: '[-]',
};

export interface RenderOptions {
  /** The latest line a running run wrote, shown under it (the live view's sub-agent activity). */
  activity?: (runId: string) => string | undefined;
  /** What a running run waits on besides its work (a retry of its model call), shown under it. */
  notice?: (runId: string) => string | undefined;
  /** Extra lines under a run (a stored run's tool outputs and summary), already indented by `indent`. */
  details?: (node: RunTree, indent: string) => string[];
}

/**
 * One line per run: status mark, agent, task, status, turns, tokens, time; children indented. On a narrow
 * terminal the task is shortened first, so status, tokens and time stay visible.
 */
export function renderTree(
  root: RunTree,
  now = Date.now(),
  width = 120,
  options: RenderOptions = {},
): string[] {
  const lines: string[] = [];
  const walk = (node: RunTree, prefix: string, childPrefix: string) => {
    lines.push(runLine(node, prefix, now, width));
    const indent = `${childPrefix}${node.children.length ? '│  ' : '   '}`;
    const latest =
      node.status === 'running' && node.parentId !== null ? options.activity?.(node.id) : undefined;
    if (latest) lines.push(clip(`${indent}┆ ${printableLine(latest)}`, width));
    const notice = node.status === 'running' ? options.notice?.(node.id) : undefined;
    if (notice) lines.push(clip(`${indent}↻ ${printableLine(notice)}`, width));
    for (const step of node.plan ?? []) {
      lines.push(clip(`${indent}${PLAN_MARKS[step.status] ?? '[ ]'} ${oneLine(step.title, 80)}`, width));
    }
    for (const line of options.details?.(node, indent) ?? []) lines.push(clip(line, width));
    for (const call of node.toolCalls) {
      if (call.diff) lines.push(clip(`${indent}✎ ${editLine(call.diff)}`, width));
      if (call.reused) {
        const task = oneLine(String((call.input as { task?: unknown }).task ?? ''), 48);
        lines.push(
          clip(
            `${indent}↺ ${call.name} "${task}"  reused from run ${call.reused.runId} (${call.reused.finishedAt})`,
            width,
          ),
        );
      }
    }
    node.children.forEach((child, index) => {
      const last = index === node.children.length - 1;
      walk(child, `${childPrefix}${last ? '└─ ' : '├─ '}`, `${childPrefix}${last ? '   ' : '│  '}`);
    });
  };
  walk(root, '', '');
  return lines;
}

function runLine(node: RunTree, prefix: string, now: number, width: number): string {
  const started = Date.parse(node.startedAt);
  const ended = node.endedAt ? Date.parse(node.endedAt) : now;
  const seconds = ((ended - started) / 1000).toFixed(1);
  // A running run counts every step that ended so far, its own and its sub-agents'; a finished one its
  // subtree's total, so the number grows at each step's end rather than jumping when the tree ends.
  const usage = node.status === 'running' ? sumTreeUsage(node) : node.subtreeUsage;
  // "~": estimated from the text because the provider reported no usage.
  const tokens = `${usage.estimated ? '~' : ''}${usage.totalTokens}`;
  const stats = `${node.status}  ${node.turns} turn${node.turns === 1 ? '' : 's'}  ${tokens} tok  ${seconds}s`;
  const calls = node.toolCalls.filter((call) => !node.children.some((child) => child.agent === call.name));
  const toolNote = calls.length ? `  [${summarizeCalls(calls)}]` : '';
  const pending = node.status === 'running' ? calls.filter((call) => call.ok === null) : [];
  const activity = pending.length ? `  → ${oneLine(pending.map((call) => call.name).join(', '), 40)}…` : '';
  const head = `${prefix}${MARKS[node.status] ?? '?'} ${node.agent}  `;
  // The task gets what is left once the status, tokens and time have their room.
  const room = Math.min(48, width - length(head) - length(stats) - 4);
  const task = room >= 6 ? `"${oneLine(node.task, room)}"  ` : '';
  const line = clip(`${head}${task}${stats}`, width);
  // Tool notes come last and give way first.
  const left = width - length(line);
  const extra = `${toolNote}${activity}`;
  return left >= 4 || length(extra) <= left ? `${line}${clip(extra, left)}` : line;
}

/** Columns `text` takes on a terminal: two for each character of East Asian scripts and most emoji. */
function length(text: string): number {
  return stringWidth(text);
}

const graphemes = new Intl.Segmenter();

/** `text` cut into pieces of at most `width` columns, never inside a character. */
function pieces(text: string, width: number): string[] {
  const cut: string[] = [];
  let piece = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const cells = stringWidth(segment);
    if (used + cells > width && piece) {
      cut.push(piece);
      piece = '';
      used = 0;
    }
    piece += segment;
    used += cells;
  }
  if (piece) cut.push(piece);
  return cut;
}

function summarizeCalls(calls: RunTree['toolCalls']): string {
  const counts = new Map<string, { total: number; failed: number }>();
  for (const call of calls) {
    const entry = counts.get(call.name) ?? { total: 0, failed: 0 };
    entry.total++;
    if (call.ok === false) entry.failed++;
    counts.set(call.name, entry);
  }
  return [...counts]
    .map(
      ([name, { total, failed }]) =>
        `${name}${total > 1 ? `×${total}` : ''}${failed ? ` (${failed} failed)` : ''}`,
    )
    .join(', ');
}

/** `path  +added −removed` for one edit's unified diff. */
function editLine(diff: string): string {
  let file = '';
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) file = line.slice(4).replace(/^b\//, '');
    else if (line.startsWith('+')) added++;
    else if (line.startsWith('-') && !line.startsWith('--- ')) removed++;
  }
  return `${oneLine(file, 60)}  +${added} −${removed}`;
}

/**
 * One printable line of at most `max` columns: whitespace collapsed, terminal control sequences (from
 * models, tasks) removed.
 */
function oneLine(text: string, max: number): string {
  return clip(printableLine(text), max);
}

/** `line` cut to `width` columns (wide characters count two), a `…` saying so. */
function clip(line: string, width: number): string {
  return length(line) > width ? `${pieces(line, Math.max(1, width - 1))[0] ?? ''}…` : line;
}

/**
 * Redraws a tree in place on a terminal, at most every `intervalMs`. Writes nothing when the stream is
 * not a terminal; the final frame is always drawn.
 */
/** Where lines are cut when the terminal reports no width. */
const UNKNOWN_WIDTH = 160;

export class LiveTree {
  #stream: NodeJS.WritableStream & { columns?: number; rows?: number };
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;
  #tree: () => RunTree | undefined;
  #preview: () => string;
  #options: RenderOptions;
  #final = false;

  /**
   * `preview` is the answer being written, shown under the tree while the run goes on; `options.activity`
   * gives each running sub-agent's latest line.
   */
  constructor(
    stream: NodeJS.WritableStream & { columns?: number; rows?: number },
    tree: () => RunTree | undefined,
    preview: () => string = () => '',
    options: RenderOptions = {},
  ) {
    this.#stream = stream;
    this.#tree = tree;
    this.#preview = preview;
    this.#options = options;
  }

  start(intervalMs = 120): void {
    this.#timer = setInterval(() => this.draw(), intervalMs);
    this.#timer.unref();
  }

  /**
   * Draws one frame over the last. A frame is redrawn in place only while every line of it is on screen:
   * cursor-up stops at the top row, so a line cut too long to wrap, or a frame taller than the terminal,
   * would leave its top in the scrollback once per redraw (hundreds of lines in tmux). So lines are cut
   * to the width, and a running frame keeps to the terminal's height, the rest counted in one line.
   * Without a known width (0 or none reported) lines are cut at a generous UNKNOWN_WIDTH, never to stubs.
   * The old frame is overwritten line by line, then cleared below the new one (see the note on tmux).
   */
  draw(): void {
    const tree = this.#tree();
    if (!tree) return;
    const { columns, rows } = this.#stream;
    const width = columns && columns > 1 ? columns - 1 : UNKNOWN_WIDTH;
    // The answer being written is the main agent's: its preview goes under the main agent's line, above
    // the sub-agents, as a sub-agent's latest line goes under its own.
    const preview = this.#preview();
    const own = this.#options.details;
    const options: RenderOptions = {
      ...this.#options,
      details: (node, indent) => [
        ...(own?.(node, indent) ?? []),
        ...(node.parentId === null ? previewLines(preview, width, 3, indent) : []),
      ],
    };
    let lines = renderTree(tree, Date.now(), width, this.#final ? {} : options);
    if (!this.#final) {
      if (rows && rows > 3 && lines.length > rows - 1) {
        const kept = lines.slice(0, rows - 2);
        const more = `  … ${lines.length - kept.length} more lines below (all shown when it ends)`;
        lines = [...kept, clip(more, width)];
      }
    }
    // Each line overwrites the old one and clears what is left of it; the old frame's rows below the new
    // one are cleared from the line under it. Never clear-to-end-of-screen from the top-left corner: tmux
    // (scroll-on-clear, on by default) first pushes the whole screen into its scrollback, once per frame.
    const up = this.#drawn ? `\x1b[${this.#drawn}A\r` : '';
    this.#stream.write(`${up}${lines.map((line) => `${line}\x1b[K`).join('\n')}\n\x1b[J`);
    this.#drawn = lines.length;
  }

  /**
   * Stops redrawing while something else (an approval question) is on screen; the next frame is drawn
   * below it instead of over it. Returns the function that resumes.
   */
  pause(): () => void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#drawn = 0;
    return () => {
      if (!this.#final) this.start();
    };
  }

  /** Draws the final tree, whole and without the preview: the answer itself is printed after it. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#final = true;
    this.draw();
  }
}

/** The last few lines of an answer being written, under its run's line (`indent` is that run's). */
export function previewLines(text: string, width: number, count = 3, indent = '  '): string[] {
  // A tab would move to a tab stop the width does not count: it is spaces here.
  const flat = withoutControls(text).replace(/\t/g, '    ').trimEnd();
  if (!flat) return [];
  const room = Math.max(20, width - length(indent) - 2);
  // Only the last `count` lines can be shown, so only they are wrapped (a long answer is not, every frame).
  const wrapped = flat
    .split('\n')
    .slice(-count)
    .flatMap((line) => (line.length ? pieces(line, room) : ['']));
  return wrapped.slice(-count).map((line) => `${indent}┆ ${line}`);
}
