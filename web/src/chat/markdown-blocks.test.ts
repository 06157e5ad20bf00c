import { describe, expect, it } from 'vitest';
import { growBlocks, markdownBlocks } from './markdown-blocks.ts';

describe('markdownBlocks', () => {
  it('cuts at blank lines between blocks, never inside a code fence or before an indented line', () => {
    const text = [
      '# Title',
      '',
      'A paragraph.',
      '',
      '```ts',
      'const a = 1;',
      '',
      'const b = 2;',
      '```',
      '',
      '- one',
      '',
      '  more of one',
      '- two',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
    ].join('\n');
    expect(markdownBlocks(text)).toEqual([
      '# Title',
      'A paragraph.',
      '```ts\nconst a = 1;\n\nconst b = 2;\n```',
      '- one\n\n  more of one\n- two',
      '| a | b |\n|---|---|\n| 1 | 2 |',
    ]);
  });

  it('keeps text whole when a reference definition or a footnote spans blocks', () => {
    const text = 'See [the docs][d].\n\nMore.\n\n[d]: https://example.org';
    expect(markdownBlocks(text)).toEqual([text]);
  });

  it('keeps display math with blank lines in it as one block', () => {
    expect(markdownBlocks('Before.\n\n$$\na = 1\n\nb = 2\n$$\n\nAfter.')).toEqual([
      'Before.',
      '$$\na = 1\n\nb = 2\n$$',
      'After.',
    ]);
    expect(markdownBlocks('$$x$$\n\nAfter.')).toEqual(['$$x$$', 'After.']);
  });

  it('keeps an unclosed fence with everything after it, as it is still being written', () => {
    expect(markdownBlocks('Intro.\n\n```js\nlet a;\n\nlet b;')).toEqual([
      'Intro.',
      '```js\nlet a;\n\nlet b;',
    ]);
  });
});

describe('growBlocks', () => {
  it('gives the same blocks as cutting the whole text, keeping the settled ones as they were', () => {
    const full = 'One.\n\n```\ncode\n\nmore\n```\n\nTwo **bold**.\n\n- a\n- b\n\nThree.';
    let previous = '';
    let blocks: string[] = [''];
    for (let end = 1; end <= full.length; end += 3) {
      const text = full.slice(0, end);
      const grown = growBlocks(previous, blocks, text);
      expect(grown).toEqual(markdownBlocks(text));
      for (let index = 0; index < blocks.length - 1; index++) expect(grown[index]).toBe(blocks[index]);
      previous = text;
      blocks = grown;
    }
  });
});
