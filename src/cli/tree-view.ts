import type { RunTree } from '../core/run-tree.ts';
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

/** One line per run: status mark, agent, task, status, turns, tokens, time; children indented. */
export function renderTree(root: RunTree, now = Date.now(), width = 120): string[] {
  const lines: string[] = [];
  const walk = (node: RunTree, prefix: string, childPrefix: string) => {
    const started = Date.parse(node.startedAt);
    const ended = node.endedAt ? Date.parse(node.endedAt) : now;
    const seconds = ((ended - started) / 1000).toFixed(1);
    const usage = node.status === 'running' ? node.usage : node.subtreeUsage;
    // "~": estimated from the text because the provider reported no usage.
    const tokens = `${usage.estimated ? '~' : ''}${usage.totalTokens}`;
    const task = oneLine(node.task, 48);
    const stats = `${node.status}  ${node.turns} turn${node.turns === 1 ? '' : 's'}  ${tokens} tok  ${seconds}s`;
    const calls = node.toolCalls.filter((call) => !node.children.some((child) => child.agent === call.name));
    const toolNote = calls.length ? `  [${summarizeCalls(calls)}]` : '';
    const pending = node.status === 'running' ? calls.filter((call) => call.ok === null) : [];
    const activity = pending.length ? `  → ${oneLine(pending.map((call) => call.name).join(', '), 40)}…` : '';
    lines.push(
      clip(
        `${prefix}${MARKS[node.status] ?? '?'} ${node.agent}  "${task}"  ${stats}${toolNote}${activity}`,
        width,
      ),
    );
    const planPrefix = `${childPrefix}${node.children.length ? '│  ' : '   '}`;
    for (const step of node.plan ?? []) {
      lines.push(clip(`${planPrefix}${PLAN_MARKS[step.status] ?? '[ ]'} ${oneLine(step.title, 80)}`, width));
    }
    node.children.forEach((child, index) => {
      const last = index === node.children.length - 1;
      walk(child, `${childPrefix}${last ? '└─ ' : '├─ '}`, `${childPrefix}${last ? '   ' : '│  '}`);
    });
  };
  walk(root, '', '');
  return lines;
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

/** One printable line: whitespace collapsed, terminal control sequences (from models, tasks) removed. */
function oneLine(text: string, max: number): string {
  const flat = printableLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function clip(line: string, width: number): string {
  return [...line].length > width ? `${[...line].slice(0, width - 1).join('')}…` : line;
}

/**
 * Redraws a tree in place on a terminal, at most every `intervalMs`. Writes nothing when the stream is
 * not a terminal; the final frame is always drawn.
 */
export class LiveTree {
  #stream: NodeJS.WritableStream & { columns?: number };
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;
  #tree: () => RunTree | undefined;
  #preview: () => string;
  #final = false;

  /** `preview` is the answer being written, shown under the tree while the run goes on. */
  constructor(
    stream: NodeJS.WritableStream & { columns?: number },
    tree: () => RunTree | undefined,
    preview: () => string = () => '',
  ) {
    this.#stream = stream;
    this.#tree = tree;
    this.#preview = preview;
  }

  start(intervalMs = 120): void {
    this.#timer = setInterval(() => this.draw(), intervalMs);
    this.#timer.unref();
  }

  draw(): void {
    const tree = this.#tree();
    if (!tree) return;
    const width = (this.#stream.columns ?? 120) - 1;
    const lines = renderTree(tree, Date.now(), width);
    if (!this.#final) lines.push(...previewLines(this.#preview(), width));
    const clear = this.#drawn ? `\x1b[${this.#drawn}A\x1b[J` : '';
    this.#stream.write(`${clear}${lines.join('\n')}\n`);
    this.#drawn = lines.length;
  }

  /** Draws the final tree, without the preview: the answer itself is printed after it. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#final = true;
    this.draw();
  }
}

/** The last few lines of an answer being written, indented under the tree. */
export function previewLines(text: string, width: number, count = 3): string[] {
  const flat = withoutControls(text).trimEnd();
  if (!flat) return [];
  const room = Math.max(20, width - 4);
  const wrapped = flat
    .split('\n')
    .flatMap((line) => (line.length ? (line.match(new RegExp(`.{1,${room}}`, 'g')) ?? []) : ['']));
  return wrapped.slice(-count).map((line) => `  ┆ ${line}`);
}
