import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxRuntime, stopSandboxRuntime } from '../../src/tools/coding/command-sandbox.ts';
import { stopStaleSandboxBridges } from '../../src/tools/coding/sandbox-bridges.ts';
import { childEnv } from '../helpers/cli.ts';

const RUNTIME = fileURLToPath(new URL('../../src/tools/coding/command-sandbox.ts', import.meta.url));

/** A process that starts the sandbox runtime (its socat bridges), says so, and waits to be killed. */
const STARTS_RUNTIME = `
const { sandboxRuntime } = await import(${JSON.stringify(RUNTIME)});
const problem = await sandboxRuntime().problem();
process.stdout.write(problem ? 'problem ' + problem + '\\n' : 'started\\n');
setInterval(() => {}, 1000);
`;

/** Running (a zombie waiting for whoever adopted it to reap it counts as gone). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

afterAll(() => stopSandboxRuntime());

describe("the sandbox runtime's bridges after a SIGKILL", () => {
  it('are stopped, and their sockets removed, by the next start', async (context) => {
    if (await sandboxRuntime().problem()) context.skip();
    const child = spawn(process.execPath, ['--input-type=module', '-e', STARTS_RUNTIME], {
      env: childEnv({ PATH: process.env.PATH ?? '' }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const said = await new Promise<string>((resolve) =>
      child.stdout!.once('data', (chunk) => resolve(String(chunk))),
    );
    expect(said).toBe('started\n');
    const folder = path.join(tmpdir(), `cadre-sandbox-bridges-${process.getuid?.()}`);
    const record = JSON.parse(readFileSync(path.join(folder, `${child.pid}.json`), 'utf8')) as {
      pids: number[];
      sockets: string[];
    };
    expect(record.pids.length).toBeGreaterThan(0);
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    // Nothing stopped them: they outlive the process that started them.
    for (const pid of record.pids) expect(alive(pid)).toBe(true);
    for (const socket of record.sockets) expect(existsSync(socket)).toBe(true);
    expect(stopStaleSandboxBridges()).toBe(record.pids.length);
    for (const socket of record.sockets) expect(existsSync(socket)).toBe(false);
    expect(readdirSync(folder)).not.toContain(`${child.pid}.json`);
    // SIGTERM ends a socat at once, but no event says so to a process that is not its parent: look again.
    for (const pid of record.pids) {
      const deadline = Date.now() + 5000;
      while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(alive(pid)).toBe(false);
    }
  });
});
