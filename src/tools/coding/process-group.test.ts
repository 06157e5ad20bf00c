import { type ChildProcess, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { startedGroup, stopInterruptedGroup } from './process-group.ts';

const groups: ChildProcess[] = [];
afterEach(() => {
  for (const child of groups.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** A command's group as bash starts one (a detached shell leading it), with a child of its own. */
function commandGroup() {
  const child = spawn('/bin/bash', ['-c', 'sleep 300 & wait'], { detached: true, stdio: 'ignore' });
  groups.push(child);
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  return { child, exited };
}

const alive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.runIf(process.platform === 'linux')('a process group an interrupted attempt left', () => {
  it('is stopped, group and all, when it is still running: the command cannot run twice at once', async () => {
    const { child, exited } = commandGroup();
    const record = startedGroup(child.pid!, Date.now() - 42_000, 120_000);
    expect(record).toMatchObject({ pgid: child.pid, host: hostname(), leaderStart: expect.any(String) });
    expect(await stopInterruptedGroup(record)).toBe(
      `It was still running as process group ${child.pid} (started 42 s before the run resumed), and Cadre stopped it (SIGKILL) so that it cannot run twice at once; it may have done part of its work.`,
    );
    expect(await exited).toBe('SIGKILL');
    // Its background `sleep` went with it (a zombie at most, waiting for init to reap it).
    expect(await stopInterruptedGroup(record)).toMatch(/^It had ended by the time the run resumed/);
  });

  it('is left alone when its id now names another group (the leader started at another moment)', async () => {
    const { child } = commandGroup();
    const record = { ...startedGroup(child.pid!, Date.now(), 120_000), leaderStart: '1' };
    expect(await stopInterruptedGroup(record)).toMatch(/^It had ended by the time the run resumed/);
    expect(alive(child.pid!)).toBe(true);
  });

  it('is never a group id that would reach other processes (0, 1, this one, or not a number)', async () => {
    for (const pgid of [0, 1, process.pid, Number.NaN, 2.5])
      expect(await stopInterruptedGroup({ pgid, host: hostname(), startedAt: Date.now() })).toMatch(
        /^Whether it is still running cannot be told/,
      );
  });

  it('is left alone, and said to be, on another machine or after a restart', async () => {
    const { child } = commandGroup();
    const record = startedGroup(child.pid!, Date.now(), 120_000);
    expect(await stopInterruptedGroup({ ...record, host: 'worker-7' })).toMatch(
      new RegExp(
        `^It ran on worker-7 as process group ${child.pid} .*, where it may still be running; it cannot be seen or stopped from `,
      ),
    );
    expect(await stopInterruptedGroup({ ...record, bootId: 'an-earlier-boot' })).toBe(
      'This machine has restarted since it was started, so it is not running any more.',
    );
    expect(alive(child.pid!)).toBe(true);
  });
});
