import { useSyncExternalStore } from 'react';

/**
 * The current time, ticking once a second while `active`: one shared interval for every running run's
 * elapsed time, stopped when nothing runs.
 */
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;
let now = Date.now();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (listeners.size === 1) {
    // The clock was stopped while nothing ran: start from the present, not from when it stopped.
    now = Date.now();
    queueMicrotask(listener);
  }
  timer ??= setInterval(() => {
    now = Date.now();
    for (const each of listeners) each();
  }, 1000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const idle = () => () => {};

export function useNow(active: boolean): number {
  return useSyncExternalStore(active ? subscribe : idle, () => (active ? now : 0));
}
