import { describe, expect, it } from 'vitest';
import { closeOpenMarkdown } from './close-open-markdown.ts';

describe('closeOpenMarkdown', () => {
  it('closes the bold, italics, strike-through and code still open at the end of the text', () => {
    expect(closeOpenMarkdown('The product is **39')).toBe('The product is **39**');
    expect(closeOpenMarkdown('an *important')).toBe('an *important*');
    expect(closeOpenMarkdown('**bold and *both')).toBe('**bold and *both***');
    expect(closeOpenMarkdown('call `fetch(')).toBe('call `fetch(`');
    expect(closeOpenMarkdown('~~old')).toBe('~~old~~');
  });

  it('leaves out a marker with nothing after it yet, and leaves finished text alone', () => {
    expect(closeOpenMarkdown('The product is **')).toBe('The product is');
    expect(closeOpenMarkdown('The product is **391**.')).toBe('The product is **391**.');
    expect(closeOpenMarkdown('**done**\n\nnext')).toBe('**done**\n\nnext');
  });

  it('does not read bullets, products, snake_case or code as markers', () => {
    expect(closeOpenMarkdown('* one\n* two')).toBe('* one\n* two');
    expect(closeOpenMarkdown('3 * 4 = 12')).toBe('3 * 4 = 12');
    expect(closeOpenMarkdown('see max_turns_limit')).toBe('see max_turns_limit');
    expect(closeOpenMarkdown('`a ** b` and')).toBe('`a ** b` and');
  });

  it('closes a code fence and a link whose URL is still arriving', () => {
    expect(closeOpenMarkdown('```ts\nconst a = 1')).toBe('```ts\nconst a = 1\n```');
    expect(closeOpenMarkdown('see [the docs](https://example.com/pa')).toBe(
      'see [the docs](https://example.com/pa)',
    );
  });
});
