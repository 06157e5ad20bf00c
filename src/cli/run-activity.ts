import type { RunView } from '../core/index.ts';

/**
 * What the live tree shows under a running sub-agent, read from its view (the projector's, the one fold
 * of the tree's events): the latest line of text it is writing, or that its provider asked it to wait.
 */

/** What the run waits on when its provider asked it to wait (a retry), or undefined. */
export function retryNotice(run: RunView | undefined): string | undefined {
  const retry = run?.retry;
  if (!retry) return undefined;
  const seconds = Math.max(1, Math.round(retry.delayMs / 1000));
  return `the provider is busy, retrying ${retry.attempt}/${retry.maxAttempts} in ${seconds}s: ${retry.reason}`;
}

/**
 * The last non-empty line a running sub-agent wrote, or undefined (the root's text is the answer preview,
 * and a finished run shows its outcome instead).
 */
export function latestLine(run: RunView | undefined): string | undefined {
  if (!run || run.depth === 0 || run.status !== 'running') return undefined;
  const lines = run.text.slice(-KEEP).split('\n');
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index]!.trim();
    if (line) return line;
  }
  return undefined;
}

/** Characters of recent text looked at: enough for one line, however much a run writes. */
const KEEP = 400;
