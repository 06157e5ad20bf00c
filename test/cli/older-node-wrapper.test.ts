/**
 * On a Node older than 24, `bin/cadre.js` starts the Node 24 the package installs as a child. Killing the
 * pid a person started, even with SIGKILL (which cannot be passed on), must not leave that child running a
 * server or a worker behind it: the child stops as on SIGTERM once its wrapper is gone.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../src/store/run-owner.ts';
import { tempHome } from '../helpers/cli.ts';

const BIN = fileURLToPath(new URL('../../bin/cadre.js', import.meta.url));
/** A Node older than 24 on this machine (Debian's), if there is one. */
const OLDER_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  if (!existsSync(path)) return false;
  const major = Number(execFileSync(path, ['-p', 'process.versions.node.split(".")[0]']).toString());
  return major < 24;
});

describe.skipIf(!OLDER_NODE)('cadre on an older Node', () => {
  it('a server whose wrapper is SIGKILLed stops too, as on SIGTERM', async () => {
    const wrapper: ChildProcess = spawn(OLDER_NODE!, [BIN, 'serve', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', CADRE_HOME: tempHome() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    wrapper.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    const deadline = Date.now() + 30_000;
    while (!output.includes('Cadre listening on') && Date.now() < deadline)
      await new Promise((resolve) => wrapper.stdout!.once('data', resolve));
    // The wrapper's child is the server: it runs on Node 24.
    const child = Number(
      execFileSync('pgrep', ['-P', String(wrapper.pid)])
        .toString()
        .trim()
        .split('\n')[0],
    );
    expect(processAlive(child)).toBe(true);
    wrapper.kill('SIGKILL');
    const gone = Date.now() + 15_000;
    while (processAlive(child) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processAlive(child)).toBe(false);
    expect(output).toMatch(/SIGTERM: stopping/);
  }, 60_000);

  it('a one-shot command through the wrapper exits by itself with its own code', () => {
    const home = tempHome();
    const listed = execFileSync(OLDER_NODE!, [BIN, 'runs', 'list'], {
      env: { PATH: process.env.PATH ?? '', CADRE_HOME: home },
      timeout: 30_000,
    }).toString();
    expect(listed).toMatch(/No runs yet/);
  });
});
