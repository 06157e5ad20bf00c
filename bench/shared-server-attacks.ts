/**
 * `npx node bench/shared-server-attacks.ts [pipes|parts|mcp]`: issue 32's resource attacks on a shared
 * server, measured in this process: the event loop's longest stall (monitorEventLoopDelay) and the peak
 * RSS (getrusage) while each attack runs, and how it ended. Not part of `npm run bench`: `pipes` needs
 * python3 and Linux, `parts` sends 48 MiB, and one run per process keeps the peak RSS its own.
 *
 * - pipes: a process swaps a folder of the root with a link to a folder of named pipes while read_file,
 *   grep and write_file are called by four callers at once, 50 rounds each; then the time an ordinary
 *   file read takes (a parked libuv thread pool never answers it).
 * - parts: one upload of 700,000 empty parts in 48 MiB to a real server socket.
 * - mcp: an MCP server whose tool answers 9 MB, called 32 times at once.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const which = process.argv[2] ?? 'parts';
const folder = mkdtempSync(path.join(tmpdir(), 'cadre-attacks-'));
const stall = monitorEventLoopDelay({ resolution: 10 });

function report(outcome: string) {
  stall.disable();
  console.log(
    `${which}: ${outcome}; longest event-loop stall ${(stall.max / 1e6).toFixed(0)} ms, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`,
  );
}

async function pipes() {
  const { workspaceTools } = await import('../src/tools/workspace/index.ts');
  const { codingTools } = await import('../src/tools/coding/index.ts');
  const { testToolContext, toolCaller } = await import('../src/core/test-tool-context.ts');
  const root = path.join(folder, 'bob');
  mkdirSync(path.join(root, 'sub'), { recursive: true });
  mkdirSync(path.join(folder, 'fifos'));
  writeFileSync(path.join(root, 'sub', 'notes.txt'), 'BOB\n');
  writeFileSync(path.join(folder, 'steady.txt'), 'steady\n');
  execFileSync('mkfifo', [path.join(folder, 'fifos', 'notes.txt'), path.join(folder, 'fifos', '.gitignore')]);
  symlinkSync(path.join(folder, 'fifos'), path.join(root, 'swap'));
  const swapper: ChildProcess = spawn(
    'python3',
    [
      '-c',
      'import ctypes,sys\nlibc=ctypes.CDLL(None)\na,b=(x.encode() for x in sys.argv[1:3])\nwhile True: libc.renameat2(-100,a,-100,b,2)',
      path.join(root, 'sub'),
      path.join(root, 'swap'),
    ],
    { stdio: 'ignore' },
  );
  const call = toolCaller(
    [...workspaceTools(root), ...codingTools({ workspace: root, env: {} })],
    testToolContext(),
  );
  stall.enable();
  // Four at once, as four users' agents would: libuv has four threads.
  const calls = Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let index = 0; index < 50; index++) {
        await call('read_file', { path: 'sub/notes.txt' }).catch(() => {});
        if (index % 10 === 0) await call('grep', { pattern: 'BOB' }).catch(() => {});
        await call('write_file', { path: 'sub/new.txt', content: 'x' }).catch(() => {});
      }
    }),
  );
  const finished = await Promise.race([calls.then(() => true), sleep(20_000).then(() => false)]);
  const started = performance.now();
  const read = await Promise.race([
    readFile(path.join(folder, 'steady.txt')).then(() => performance.now() - started),
    sleep(10_000).then(() => undefined),
  ]);
  swapper.kill('SIGKILL');
  report(
    `${finished ? 'the 4 × 50 rounds of calls ended' : 'the calls had not ended after 20 s'}; an ordinary file read then took ${read === undefined ? 'more than 10,000 ms (never answered)' : `${read.toFixed(1)} ms`}`,
  );
  // Threads parked in open() on a pipe keep the process alive: end it.
  process.exit(0);
}

async function parts() {
  const { startServer } = await import('../src/server/serve.ts');
  const { Cadre } = await import('../src/app/create-cadre.ts');
  const home = path.join(folder, 'home');
  const cadre = await Cadre.create({ env: { CADRE_HOME: home, CADRE_MODEL: 'openai:none' }, cwd: folder });
  const { token } = await cadre.users.add('bench');
  const server = await startServer({ cadre, host: '127.0.0.1', port: 0 });
  const boundary = 'bench-parts';
  const part = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="xxxxxxxxxxx"\r\n\r\n\r\n`);
  const count = 700_000;
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const length = part.byteLength * count + tail.byteLength;
  stall.enable();
  const status = await new Promise<string>((resolve) => {
    const sending = request(
      `${server.url}/api/documents`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(length),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(`answered ${response.statusCode}`));
      },
    );
    sending.on('error', (error) => resolve(`client saw ${(error as NodeJS.ErrnoException).code}`));
    const chunk = Buffer.concat(Array.from({ length: 1000 }, () => part));
    let sent = 0;
    const pump = () => {
      while (sent < count) {
        sent += 1000;
        if (!sending.write(chunk)) return void sending.once('drain', pump);
      }
      sending.end(tail);
    };
    pump();
  });
  report(`${(length / 1024 / 1024).toFixed(0)} MiB of ${count} parts: ${status}`);
  await server.close();
}

async function mcp() {
  const { McpServerConnection } = await import('../src/tools/mcp/server-connection.ts');
  const { describeResult } = await import('../src/tools/mcp/tool-output.ts');
  const script = path.resolve('test/fixtures/mcp/big-output-server.ts');
  const connection = new McpServerConnection('big', { command: process.execPath, args: [script] }, 'bench');
  await connection.start();
  stall.enable();
  const signal = new AbortController().signal;
  // As the tool does: the result described, then kept (stringified) for the run's events.
  const outputs = await Promise.all(
    Array.from({ length: 32 }, () =>
      connection.call('big', { megabytes: 9 }, signal).then(
        (result) => `${JSON.stringify(describeResult(result)).length} characters`,
        (error: Error & { code?: string }) => `refused (${error.code})`,
      ),
    ),
  );
  const counts = new Map<string, number>();
  for (const output of outputs) counts.set(output, (counts.get(output) ?? 0) + 1);
  report(`32 calls of 9 MB: ${[...counts].map(([what, n]) => `${n} × ${what}`).join(', ')}`);
  await connection.close();
}

function sleep(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
}

await ({ pipes, parts, mcp } as Record<string, () => Promise<void>>)[which]!();
