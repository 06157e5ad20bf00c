import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../core/run-tree.ts';
import { LiveTree, previewLines, renderTree } from './tree-view.ts';

const usage = (totalTokens: number) => ({ inputTokens: totalTokens, outputTokens: 0, totalTokens });

function run(partial: Partial<RunTree> & { id: string; agent: string }): RunTree {
  return {
    parentId: null,
    task: 'task',
    status: 'ok',
    summary: '',
    model: 'm:x',
    turns: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.500Z',
    usage: usage(10),
    subtreeUsage: usage(10),
    toolCalls: [],
    children: [],
    ...partial,
  };
}

describe('tree view', () => {
  it('shows each run with status, turns, tokens, time, tool calls and plan steps', () => {
    const tree = run({
      id: 'a',
      agent: 'main',
      task: 'Plan a trip',
      turns: 2,
      subtreeUsage: usage(300),
      toolCalls: [{ id: '1', name: 'planner', input: {}, ok: true, ms: 5 }],
      children: [
        run({
          id: 'b',
          agent: 'planner',
          status: 'max_turns',
          turns: 10,
          subtreeUsage: usage(200),
          plan: [
            { title: 'Find flights', status: 'done' },
            { title: 'Book hotel', status: 'running' },
          ],
          toolCalls: [
            { id: '2', name: 'web_search', input: {}, ok: true, ms: 5 },
            { id: '3', name: 'web_search', input: {}, ok: false, ms: 5 },
          ],
        }),
      ],
    });
    expect(renderTree(tree)).toEqual([
      '✓ main  "Plan a trip"  ok  2 turns  300 tok  1.5s',
      '└─ ↻ planner  "task"  max_turns  10 turns  200 tok  1.5s  [web_search×2 (1 failed)]',
      '      [x] Find flights',
      '      [>] Book hotel',
    ]);
  });

  it('prints no terminal control sequences from tasks or plans', () => {
    const tree = run({
      id: 'a',
      agent: 'main',
      task: 'evil \x1b]0;owned\x07title \x1b[2J\x1b[31mred\x1b[0m \x07bell',
      plan: [{ title: 'step \x1b[1A\x1b[Kup', status: 'pending' }],
    });
    const lines = renderTree(tree);
    const controls = [...lines.join('\n')].filter((char) => char !== '\n' && (char < ' ' || char === '\x7f'));
    expect(controls).toEqual([]);
    expect(lines[0]).toContain('"evil title red bell"');
    expect(lines[1]).toContain('[ ] step up');
  });

  it('says which tools a running run is waiting on', () => {
    const tree = run({
      id: 'a',
      agent: 'research',
      status: 'running',
      endedAt: null,
      toolCalls: [
        { id: '1', name: 'web_search', input: {}, ok: true, ms: 5 },
        { id: '2', name: 'web_fetch', input: {}, ok: null, ms: null },
      ],
    });
    expect(renderTree(tree, Date.parse('2026-01-01T00:00:02.000Z'))[0]).toBe(
      '◌ research  "task"  running  1 turn  10 tok  2.0s  [web_search, web_fetch]  → web_fetch…',
    );
  });

  it('previews the last lines of the answer being written, wrapped and cleaned', () => {
    expect(previewLines('', 80)).toEqual([]);
    expect(previewLines('one\ntwo\nthree\nfour \x1b[31mred\x1b[0m', 80)).toEqual([
      '  ┆ two',
      '  ┆ three',
      '  ┆ four red',
    ]);
    expect(previewLines('x'.repeat(50), 24, 2)).toEqual([`  ┆ ${'x'.repeat(20)}`, `  ┆ ${'x'.repeat(10)}`]);
  });
});

describe('edits in the tree', () => {
  it('shows each file an edit changed with its added and removed lines', () => {
    const diff = '--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,2 +1,2 @@\n-a\n+b\n+c\n d\n';
    const lines = renderTree(
      run({
        id: 'a',
        agent: 'coder',
        toolCalls: [{ id: '1', name: 'edit_file', input: {}, ok: true, ms: 1, diff }],
      }),
    );
    expect(lines[1]).toBe('   ✎ src/app.ts  +2 −1');
  });

  it('redraws in place on a small terminal: nothing reaches the scrollback until the final tree', () => {
    const terminal = fakeTerminal(40, 8);
    const children = Array.from({ length: 12 }, (_, index) =>
      run({
        id: `c${index}`,
        agent: 'math',
        status: 'running',
        task: `a long task number ${index} `.repeat(4),
      }),
    );
    const tree = run({ id: 'r', agent: 'main', status: 'running', children });
    const live = new LiveTree(
      terminal as never,
      () => tree,
      () => 'the answer so far, '.repeat(10),
    );
    for (let frame = 0; frame < 50; frame++) live.draw();
    expect(terminal.scrolledAway()).toBe(0);
    expect(terminal.screen().at(-2)).toMatch(/more lines below/);
  });

  it('redraws in place when it starts at the top row, where tmux keeps a cleared screen in its scrollback', () => {
    const terminal = fakeTerminal(100, 30);
    let seconds = 0;
    const tree = () =>
      run({
        id: 'r',
        agent: 'main',
        status: 'running',
        endedAt: undefined,
        children: [run({ id: 'c', agent: 'math', status: 'running', endedAt: undefined })],
      });
    const live = new LiveTree(terminal as never, tree, () => `line ${seconds++}\n`.repeat(3));
    for (let frame = 0; frame < 100; frame++) live.draw();
    expect(terminal.scrolledAway()).toBe(0);
    live.stop();
    expect(terminal.scrolledAway()).toBe(0);
    expect(terminal.screen().filter((line) => line.includes('main'))).toHaveLength(1);
  });

  it('redraws in place when tasks and the answer are in a script whose characters take two columns', () => {
    const terminal = fakeTerminal(60, 20);
    const children = [0, 1].map((index) =>
      run({
        id: `c${index}`,
        parentId: 'r',
        agent: 'research',
        status: 'running',
        task: '東京の人口を調べる'.repeat(4),
      }),
    );
    const tree = run({
      id: 'r',
      agent: 'main',
      status: 'running',
      task: '東京と大阪の人口は？'.repeat(4),
      children,
    });
    const live = new LiveTree(
      terminal as never,
      () => tree,
      () => '東京の人口は約千四百万人です。'.repeat(8),
    );
    for (let frame = 0; frame < 30; frame++) live.draw();
    expect(terminal.scrolledAway()).toBe(0);
    expect(terminal.screen().filter((line) => line.startsWith('◌ main'))).toHaveLength(1);
    // The task gives way to the status, tokens and time, as it does in a Latin script.
    expect(terminal.screen()[0]).toMatch(/^◌ main {2}"東京.*…" {2}running {2}1 turn {2}\d+ tok {2}\d+\.\ds$/);
  });

  it('draws the main agent’s answer preview under the main agent, not under its last child', () => {
    const terminal = fakeTerminal(100, 30);
    const children = ['first', 'last'].map((task, index) =>
      run({ id: `c${index}`, parentId: 'r', agent: 'math', task, status: 'ok' }),
    );
    const tree = run({ id: 'r', agent: 'main', status: 'running', endedAt: undefined, children });
    new LiveTree(
      terminal as never,
      () => tree,
      () => 'The total\nis 42.',
    ).draw();
    const screen = terminal.screen().filter(Boolean);
    expect(screen[0]).toMatch(/^◌ main/);
    expect(screen.slice(1, 3)).toEqual(['│  ┆ The total', '│  ┆ is 42.']);
    expect(screen[3]).toMatch(/^├─ ✓ math {2}"first"/);
    expect(screen[4]).toMatch(/^└─ ✓ math {2}"last"/);
    expect(screen).toHaveLength(5);
  });

  it('cuts lines at a generous width when the terminal reports none, not to stubs', () => {
    for (const columns of [0, undefined]) {
      const written: string[] = [];
      const stream = { columns, write: (text: string) => written.push(text) > 0 };
      const tree = run({ id: 'r', agent: 'main', task: 'What is the population of Lyon and of Marseille?' });
      new LiveTree(stream as never, () => tree).stop();
      expect(written.join('')).toContain('"What is the population of Lyon and of Marseille?"');
    }
  });
});

/** Cursor-up, clear-to-end of screen and clear-to-end of line, the sequences a redraw writes. */
const CONTROL = new RegExp(`^${String.fromCharCode(27)}\\[(\\d*)([AJK])`);

/**
 * A terminal as far as redrawing needs: rows that scroll away at the bottom, lines that wrap at the
 * width, cursor-up that stops at the top row, clear-to-end. Counts the rows pushed into scrollback.
 * Like tmux (its `scroll-on-clear` option, on by default), clearing to the end of the screen from the
 * top-left corner clears the whole screen, so it first pushes what the screen shows into the scrollback.
 */
function fakeTerminal(columns: number, rows: number) {
  // Each row is its cells; a character two columns wide fills its cell and an empty one after it.
  const screen: string[][] = [[]];
  let row = 0;
  let column = 0;
  let scrolled = 0;
  const newline = () => {
    row++;
    column = 0;
    if (row >= rows) {
      screen.shift();
      scrolled++;
      row = rows - 1;
    }
    screen[row] ??= [];
  };
  return {
    columns,
    rows,
    write(text: string) {
      for (let index = 0; index < text.length; index++) {
        const sequence = CONTROL.exec(text.slice(index));
        if (sequence) {
          if (sequence[2] === 'A') row = Math.max(0, row - Number(sequence[1] || 1));
          else if (sequence[2] === 'K') screen[row] = screen[row]!.slice(0, column);
          else {
            if (row === 0 && column === 0) scrolled += screen.filter((line) => line.length).length;
            screen.splice(row + 1);
            screen[row] = screen[row]!.slice(0, column);
          }
          index += sequence[0].length - 1;
        } else if (text[index] === '\n') newline();
        else if (text[index] === '\r') column = 0;
        else {
          // Characters of East Asian scripts take two columns; one that does not fit wraps whole.
          const cells = stringWidth(text[index]!);
          if (column + cells > columns) newline();
          const line = screen[row]!;
          while (line.length < column) line.push(' ');
          line.splice(column, cells, text[index]!, ...(cells === 2 ? [''] : []));
          column += cells;
        }
      }
      return true;
    },
    scrolledAway: () => scrolled,
    screen: () => screen.map((line) => line.join('')),
  };
}
