import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.ts';

describe('cadre writing into a pipe that closes', () => {
  it('exits quietly when the reader goes away (cadre … | head)', async () => {
    const env = { CADRE_HOME: tempHome() };
    for (const args of [['agents', 'show', 'planner'], ['agents', 'list'], ['--help']]) {
      // The reading end is closed before cadre writes anything, so every write meets EPIPE.
      const result = await runCli(args, env, { onSpawn: (child) => child.stdout?.destroy() });
      expect(result.stderr).not.toMatch(/EPIPE|\n\s+at /);
      expect(result.code).toBe(0);
    }
  });
});
