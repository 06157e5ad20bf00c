import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { captureStream } from '../helpers/capture.ts';
import { tempHome } from '../helpers/cli.ts';

const isMain = (system: string) => system.includes('## When to delegate');

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const ESC = String.fromCharCode(27);

/**
 * Frames the live view drew: each redraw starts after a cursor-up + carriage return; each line ends with
 * clear-to-end-of-line and a frame with clear-to-end-of-screen, which are dropped here.
 */
function frames(stderr: string): string[][] {
  const redraw = new RegExp(`${ESC}\\[\\d+A\r`);
  const clears = new RegExp(`${ESC}\\[[JK]`, 'g');
  return stderr.split(redraw).map((frame) => frame.replace(clears, '').split('\n').filter(Boolean));
}

describe('the live tree on a terminal', () => {
  it('shows a running sub-agent’s latest line, and keeps status, tokens and time at 50 columns', async () => {
    const server = await startOpenAIServer(({ body, system, index }) => {
      const last = body.messages.at(-1);
      if (isMain(system))
        return last?.role === 'user'
          ? {
              toolCalls: [
                {
                  name: 'math',
                  arguments: { task: 'Add up the long list of numbers in the attached ledger.' },
                },
              ],
            }
          : { text: 'The total is 42.' };
      if (last?.role === 'user')
        return {
          text: 'First I list the numbers.\nNow adding them with the calculator',
          toolCalls: [{ name: 'calculate', arguments: { expression: '40 + 2' } }],
        };
      return { text: 'The total is 42.', delayMs: 700 + index };
    });
    close = server.close;
    const stdout = captureStream();
    const stderr = captureStream({ tty: true, columns: 50 });
    const code = await main(['ask', 'What is the total of the ledger?'], {
      stdout: stdout.stream,
      stderr: stderr.stream,
      env: { CADRE_HOME: tempHome(), CADRE_MODEL: 'compatible:m', CADRE_COMPATIBLE_BASE_URL: server.baseURL },
    });
    expect(code).toBe(0);
    const drawn = frames(stderr.text());
    const withActivity = drawn.find((frame) =>
      frame.some((line) => line.includes('┆ Now adding them with the calculator')),
    );
    expect(withActivity).toBeDefined();
    const mathLine = withActivity!.findIndex((line) => line.includes('math'));
    expect(withActivity![mathLine + 1]).toMatch(/┆ Now adding/);
    for (const frame of drawn)
      for (const line of frame.filter((text) => /^(└─ |├─ )?[◌✓]/.test(text))) {
        expect([...line].length).toBeLessThanOrEqual(49);
        expect(line).toMatch(/(running|ok) {2}\d+ turns? {2}\d+ tok {2}\d+\.\ds/);
      }
    const final = drawn.at(-1)!;
    expect(final.join('\n')).not.toContain('┆');
    expect(final[0]).toMatch(/^✓ main {2}"What is th.*…" {2}ok {2}2 turns {2}\d+ tok {2}\d+\.\ds/);
  });
});

describe('the main agent’s tokens in the live tree', () => {
  it('count each step as it ends, its sub-agents’ too, not only when the tree ends', async () => {
    const server = await startOpenAIServer(({ body, system }) => {
      const last = body.messages.at(-1);
      const usage = (prompt_tokens: number) => ({ prompt_tokens, completion_tokens: 0 });
      if (isMain(system))
        return last?.role === 'user'
          ? { toolCalls: [{ name: 'math', arguments: { task: 'Add 40 and 2.' } }], usage: usage(1000) }
          : {
              text: 'The total is 42, as the math agent found. '.repeat(6),
              pieceDelayMs: 40,
              usage: usage(4000),
            };
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'calculate', arguments: { expression: '40 + 2' } }], usage: usage(200) };
      return { text: 'The total is 42.', usage: usage(300) };
    });
    close = server.close;
    const stdout = captureStream();
    const stderr = captureStream({ tty: true, columns: 100 });
    const code = await main(['ask', 'What is 40 + 2?'], {
      stdout: stdout.stream,
      stderr: stderr.stream,
      env: { CADRE_HOME: tempHome(), CADRE_MODEL: 'compatible:m', CADRE_COMPATIBLE_BASE_URL: server.baseURL },
    });
    expect(code).toBe(0);
    const mainLines = frames(stderr.text()).map(
      (frame) => frame.find((line) => /^[◌✓] main/.test(line)) ?? '',
    );
    // While the answer is written: the main agent's first step (1000) and the math agent's two (500).
    const writing = mainLines.filter((line) => line.includes('running  1 turn '));
    expect(writing.length).toBeGreaterThan(0);
    for (const line of writing) expect(line).toMatch(/ 1500 tok /);
    expect(mainLines.at(-1)).toMatch(/ok {2}2 turns {2}5500 tok /);
  });
});
