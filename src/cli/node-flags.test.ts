import { describe, expect, it } from 'vitest';
import { missingNodeFlags, SERVE_NODE_FLAGS } from './node-flags.ts';

describe('the Node flags a command restarts with', () => {
  it('gives `serve` a smaller young generation, and no other command anything', () => {
    expect(missingNodeFlags(['serve', '--port', '0'], [], '')).toEqual([...SERVE_NODE_FLAGS]);
    expect(missingNodeFlags(['ask', 'serve'], [], '')).toEqual([]);
    expect(missingNodeFlags([], [], '')).toEqual([]);
  });

  it('adds nothing the process already runs with, or the user chose, in either spelling', () => {
    expect(missingNodeFlags(['serve'], ['--max-semi-space-size=16'], '')).toEqual([]);
    expect(missingNodeFlags(['serve'], ['--max-semi-space-size=64'], '')).toEqual([]);
    expect(missingNodeFlags(['serve'], [], '--enable-source-maps --max_semi_space_size=32')).toEqual([]);
    expect(missingNodeFlags(['serve'], ['--enable-source-maps'], '--max-old-space-size=512')).toEqual([
      ...SERVE_NODE_FLAGS,
    ]);
  });
});
