/**
 * A command's process group as a journal records it, and what a resumed run does with one an interrupted
 * attempt left behind. The group outlives a SIGKILLed Cadre (it is detached, so nothing kills it), with
 * nobody left to read its output, enforce its time limit or stop it. A resume stops it rather than waiting
 * for it: its output can no longer reach the run, a command that ignores its end (a server, a watcher)
 * would hold the run for ever, and the person is asked about running it again at once, told what became
 * of it, instead of watching a silent wait of up to ten minutes. Stopping it is what its time limit or the
 * Stop button would have done.
 *
 * A group is taken for the recorded one only when that can be told on this machine: the same host and
 * boot, and a leader (if one is left) that started at the recorded moment (Linux's /proc), since a group
 * id is reused once the group has ended. Anything else is left alone and said.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** What `bash` records of a command's group before the command runs (ToolContext.recordStart). */
export interface StartedGroup {
  pgid: number;
  host: string;
  /** The kernel's boot id (Linux), so a group id from before a restart is never taken for a live one. */
  bootId?: string;
  /** The leader's start time in clock ticks since boot (Linux /proc), to tell a reused group id. */
  leaderStart?: string;
  /** Milliseconds since the epoch. */
  startedAt: number;
  timeoutMs: number;
}

/** The record for a group whose leader (the shell) is `pid`, read right after it was spawned. */
export function startedGroup(pid: number, startedAt: number, timeoutMs: number): StartedGroup {
  const bootId = readBootId();
  const leaderStart = readStat(pid)?.startTime;
  return {
    pgid: pid,
    host: hostname(),
    ...(bootId ? { bootId } : {}),
    ...(leaderStart ? { leaderStart } : {}),
    startedAt,
    timeoutMs,
  };
}

/** Longest a stopped group is waited for to be gone (SIGKILL takes effect when each process next runs). */
const GONE_WITHIN_MS = 5_000;

/**
 * Deals with the group an interrupted attempt's command left (see the file's comment) and says what
 * became of the command, for the person asked whether to run it again. A group it stops is gone when
 * this resolves (its processes exited, their files and locks released), so a new run cannot overlap it.
 */
export async function stopInterruptedGroup(
  started: Partial<StartedGroup>,
  now = Date.now(),
): Promise<string> {
  const { pgid, host } = started;
  const since =
    typeof started.startedAt === 'number'
      ? ` (started ${Math.max(0, Math.round((now - started.startedAt) / 1000))} s before the run resumed)`
      : '';
  // Never 0, 1 or this process: kill(-1) would reach every process this user may signal.
  if (typeof pgid !== 'number' || !Number.isInteger(pgid) || pgid <= 1 || pgid === process.pid)
    return `Whether it is still running cannot be told${since}.`;
  if (host !== hostname()) {
    return `It ran on ${host ?? 'another machine'} as process group ${pgid}${since}, where it may still be running; it cannot be seen or stopped from ${hostname()}.`;
  }
  if (started.bootId && started.bootId !== readBootId()) {
    return `This machine has restarted since it was started, so it is not running any more.`;
  }
  const members = groupMembers(pgid);
  if (!members) {
    // No /proc (macOS): a live group of that id cannot be told from a reused one, so it is left alone.
    return groupExists(pgid)
      ? `A process group ${pgid} is running on this machine${since}; Cadre cannot tell whether it is this command's, so it was left alone.`
      : `It is not running any more${since}.`;
  }
  const leader = members.find((member) => member.pid === pgid);
  const reused =
    leader !== undefined && started.leaderStart !== undefined && leader.startTime !== started.leaderStart;
  if (reused || !running(members)) return `It had ended by the time the run resumed${since}.`;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    return `It had ended by the time the run resumed${since}.`;
  }
  const deadline = Date.now() + GONE_WITHIN_MS;
  while (running(groupMembers(pgid) ?? []) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  if (running(groupMembers(pgid) ?? [])) {
    return `It was still running as process group ${pgid}${since}; Cadre sent it SIGKILL, but some of its processes had not ended ${GONE_WITHIN_MS / 1000} s later.`;
  }
  return `It was still running as process group ${pgid}${since}, and Cadre stopped it (SIGKILL) so that it cannot run twice at once; it may have done part of its work.`;
}

/** Some member still runs (a zombie has exited: its files and locks are released). */
function running(members: ProcessStat[]): boolean {
  return members.some((member) => member.state !== 'Z');
}

interface ProcessStat {
  pid: number;
  state: string;
  pgrp: number;
  startTime: string;
}

/** One process's state, group and start time from /proc/<pid>/stat; undefined when gone or not Linux. */
function readStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or parentheses: count from the last.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, , pgrp] = fields;
  const startTime = fields[19];
  if (!state || !pgrp || !startTime) return undefined;
  return { pid, state, pgrp: Number(pgrp), startTime };
}

/** Every process in group `pgid` (zombies included), or undefined where there is no /proc. */
function groupMembers(pgid: number): ProcessStat[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const members: ProcessStat[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.pgrp === pgid) members.push(stat);
  }
  return members;
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
