import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** The process that runs a run: recorded with it, so a later start can tell whether it is still going. */
export interface RunOwner {
  pid: number;
  host: string;
}

/**
 * Runs this process has recorded as started and not yet as finished. The sweep (markInterruptedRuns) tells
 * this process's runs from an earlier process's with the same id by it: in a container every start is often
 * process 1, so the id alone would keep a crashed server's runs "running" for ever.
 */
export const runsStartedHere = new Set<string>();

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

let boot: string | undefined;

/**
 * This boot of the machine, where the system says (Linux): no process of an earlier boot is alive, however
 * its process id has been reused since. Empty where unknown.
 */
export function currentBoot(): string {
  if (boot === undefined) {
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')
        .replace(/[^0-9a-f]/g, '')
        .slice(0, 12);
    } catch {
      boot = '';
    }
  }
  return boot;
}

let local: string | undefined;

/**
 * Where this process's id means something: a digest of this machine's name, its boot and this process's
 * pid namespace (two containers may share a host name, never a pid namespace). Processes with the same key
 * can tell whether each other's ids are alive. Empty where the system does not say (not Linux).
 */
export function localKey(): string {
  if (local === undefined) {
    try {
      const namespace = readlinkSync('/proc/self/ns/pid');
      local = currentBoot()
        ? createHash('sha256')
            .update(`${hostname()}\n${currentBoot()}\n${namespace}`)
            .digest('hex')
            .slice(0, 16)
        : '';
    } catch {
      local = '';
    }
  }
  return local;
}
