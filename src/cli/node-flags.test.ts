import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI_ENTRY, childEnv, runCli, tempHome } from '../../test/helpers/cli.ts';
import { missingNodeFlags, ONE_SHOT_V8_FLAGS, SERVE_NODE_FLAGS, tuneHeapForCommand } from './node-flags.ts';

describe('the Node flags a command restarts with', () => {
  it('gives `serve` a smaller young generation, and no other command anything', () => {
    expect(missingNodeFlags(['serve', '--port', '0'], [], '')).toEqual([...SERVE_NODE_FLAGS]);
    expect(missingNodeFlags(['ask', 'serve'], [], '')).toEqual([]);
    expect(missingNodeFlags([], [], '')).toEqual([]);
  });

  it('adds nothing the process already runs with, or the user chose, in either spelling', () => {
    expect(missingNodeFlags(['serve'], ['--max-semi-space-size=16'], '')).toEqual([]);
    expect(missingNodeFlags(['serve'], ['--max-semi-space-size=64'], '')).toEqual([]);
    expect(missingNodeFlags(['serve'], [], '--enable-source-maps --max_semi_space_size=32')).toEqual([]);
    expect(missingNodeFlags(['serve'], ['--enable-source-maps'], '--max-old-space-size=512')).toEqual([
      ...SERVE_NODE_FLAGS,
    ]);
  });
});

describe('the heap setting a one-shot command runs with', () => {
  it('keeps the young generation small for commands that exit, not for servers or a size the user chose', () => {
    expect(tuneHeapForCommand(['serve'], [], '')).toEqual([]);
    expect(tuneHeapForCommand(['mcp'], [], '')).toEqual([]);
    expect(tuneHeapForCommand(['ask', 'hi'], ['--max-semi-space-size=64'], '')).toEqual([]);
    expect(tuneHeapForCommand(['ask', 'hi'], [], '--semi_space_growth_factor=2')).toEqual([]);
    // Applied to this test process too: a young generation that does not grow is harmless here.
    expect(tuneHeapForCommand(['ask', 'hi'], [], '')).toEqual([...ONE_SHOT_V8_FLAGS]);
  });
});

describe('cadre serve restarting itself', () => {
  it.runIf(process.platform === 'linux')('runs in the same process with the flags added', async () => {
    let commandLine = '';
    let pid: number | undefined;
    const result = await runCli(
      ['serve', '--port', '0'],
      { CADRE_HOME: tempHome() },
      {
        onSpawn: (child) => {
          pid = child.pid;
          child.stdout!.on('data', (chunk: Buffer) => {
            if (!chunk.toString().includes('Cadre listening')) return;
            commandLine = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').join(' ');
            child.kill('SIGTERM');
          });
        },
      },
    );
    expect(pid).toBeDefined();
    expect(commandLine).toContain(`${SERVE_NODE_FLAGS.join(' ')} `);
    expect(commandLine).toMatch(/main\.ts serve --port 0/);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
  });

  it('keeps the IPC channel of a parent that forked it (pm2, child_process.fork): it serves as it is', async () => {
    const child = fork(CLI_ENTRY, ['serve', '--port', '0'], {
      env: childEnv({ CADRE_HOME: tempHome() }),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let disconnected = false;
    child.on('disconnect', () => {
      disconnected = true;
    });
    const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      const listening = await new Promise<boolean>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('Cadre listening')) resolve(true);
        });
        child.on('exit', () => resolve(false));
      });
      expect(listening).toBe(true);
      expect({ connected: child.connected, disconnected }).toEqual({ connected: true, disconnected: false });
    } finally {
      // Stopped whatever the outcome: a failed expectation must not leave a server running.
      child.kill('SIGTERM');
    }
    expect(await exit).toEqual({ code: 0, signal: null });
  });

  it('serves as it is, instead of aborting, when the Node binary cannot be run again', async () => {
    // As when the binary is gone or not executable by then (removed by an upgrade, a noexec mount): Node
    // does not throw when execve itself fails, it aborts the process.
    const home = tempHome();
    const preload = join(home, 'binary-gone.mjs');
    writeFileSync(preload, `process.execPath = ${JSON.stringify(join(home, 'no-such-node'))};\n`);
    const result = await runCli(
      ['serve', '--port', '0'],
      { CADRE_HOME: home, NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` },
      {
        onSpawn: (child) => {
          child.stdout!.on('data', (chunk: Buffer) => {
            if (chunk.toString().includes('Cadre listening')) child.kill('SIGTERM');
          });
        },
      },
    );
    expect(result.stderr).not.toMatch(/execve failed/);
    expect(result.stdout).toMatch(/Cadre listening on http:\/\/127\.0\.0\.1:\d+/);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
  });

  it.runIf(process.platform === 'linux')(
    'stays the process a debugger attached to (--inspect): no restart',
    async () => {
      let commandLine = '';
      const result = await runCli(
        ['serve', '--port', '0'],
        { CADRE_HOME: tempHome(), NODE_OPTIONS: '--inspect=127.0.0.1:0' },
        {
          onSpawn: (child) => {
            child.stdout!.on('data', (chunk: Buffer) => {
              if (!chunk.toString().includes('Cadre listening')) return;
              commandLine = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').join(' ');
              child.kill('SIGTERM');
            });
          },
        },
      );
      expect(result.stderr).toMatch(/Debugger listening on ws:/);
      expect(commandLine).toMatch(/main\.ts serve --port 0/);
      for (const flag of SERVE_NODE_FLAGS) expect(commandLine).not.toContain(flag);
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    },
  );
});
