import { hostname } from 'node:os';

/** The process that runs a run: recorded with it, so a later start can tell whether it is still going. */
export interface RunOwner {
  pid: number;
  host: string;
}

/** This process. */
export function currentOwner(): RunOwner {
  return { pid: process.pid, host: hostname() };
}

/** True when a process with this id exists on this machine (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
