/**
 * How many sub-agents run in the background now (`background: true` in their definition), above the
 * message box: the answer stays open until they end and the main agent has answered their results (once
 * main has answered, the box talks to it meanwhile).
 */
import type { RunStore } from './run-store.ts';
import { useBackgroundRunning } from './run-store.ts';

export function BackgroundCount({ store }: { store: RunStore }) {
  const count = useBackgroundRunning(store);
  if (!count) return null;
  const words = `${count} running in the background`;
  return (
    <p className="background-count" role="status" aria-label={words}>
      <span className="spinner small" aria-hidden="true" /> {words}
      <span className="background-count-note">· their results come back to the main agent</span>
    </p>
  );
}
