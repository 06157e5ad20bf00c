/**
 * `npx node bench/hostile-inputs.ts`: the worst cases of issue 8's "Reliability" section, each run through
 * the real `cadre` command in a child process under `/usr/bin/time`, printing its exit code, peak memory
 * (max RSS) and wall time. Hostile files are generated here; hostile model output comes from local servers.
 * Not part of `npm run bench` (it takes a minute and needs /usr/bin/time).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pdfBomb, xlsxBomb } from '../test/fixtures/documents/bombs.ts';
import { type FixtureScript, startOpenAIServer } from '../test/fixtures/openai-server.ts';

const CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'cadre-hostile-'));

interface Measured {
  name: string;
  code: number | null;
  rssMb: number;
  seconds: number;
  said: string;
}

function timed(name: string, args: string[], env: Record<string, string>): Promise<Measured> {
  const home = mkdtempSync(join(folder, 'home-'));
  const child = spawn('/usr/bin/time', ['-f', 'TIME %M %e', process.execPath, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', CADRE_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const match = /TIME (\d+) ([\d.]+)/.exec(stderr);
      const said =
        stderr
          .replace(/TIME .*\n?/, '')
          .replace(/Command exited.*\n?/, '')
          .trim() || stdout.trim();
      resolve({
        name,
        code: Number(/Command exited with non-zero status (\d+)/.exec(stderr)?.[1] ?? code),
        rssMb: match ? Math.round(Number(match[1]) / 1024) : Number.NaN,
        seconds: match ? Number(match[2]) : Number.NaN,
        // The last line: progress lines (redrawn with \r) come first, the verdict last.
        said:
          said
            .split(/[\r\n]+/)
            .filter((line) => line.trim())
            .at(-1)
            ?.slice(0, 200) ?? '',
      });
    }),
  );
}

function file(name: string, content: Uint8Array | string): string {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
}

async function rawServer(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => server.closeAllConnections(),
  };
}

const results: Measured[] = [];
const docs = async (name: string, path: string) => results.push(await timed(name, ['docs', 'add', path], {}));

await docs('xlsx unpacking to 190 MB', file('bomb.xlsx', await xlsxBomb(190)));
await docs('xlsx lying about its sizes (190 MB)', file('liar.xlsx', await xlsxBomb(190, true)));
await docs(
  '140 KB CSV padded to its widest row',
  file('wide.csv', `${'a,'.repeat(35_000)}a\n${'a\n'.repeat(35_000)}`),
);
await docs('44 MB one-line CSV', file('line.csv', 'a,'.repeat(22_000_000)));
await docs('500,000-row CSV (accepted)', file('rows.csv', `n\n${'1\n'.repeat(500_000)}`));
await docs('PDF compression bomb (2.4 GB of spaces)', file('bomb.pdf', await pdfBomb(2_400)));

async function ask(name: string, script: FixtureScript) {
  const server = await startOpenAIServer(script);
  results.push(
    await timed(name, ['ask', '--agent', 'math', 'Do the maths.'], {
      CADRE_MODEL: 'compatible:fixture',
      CADRE_COMPATIBLE_BASE_URL: server.baseURL,
    }),
  );
  await server.close();
}
const once = (call: { name: string; arguments: unknown }) => (request: { index: number }) =>
  request.index === 0 ? { toolCalls: [call] } : { text: 'Understood.' };

await ask(
  'calculate size(zeros(32000,32000))',
  once({ name: 'calculate', arguments: { expression: 'size(zeros(32000,32000))' } }),
);
await ask(
  'calculate 2000x2000 matrix product',
  once({ name: 'calculate', arguments: { expression: 'size(ones(2000,2000) * ones(2000,2000))' } }),
);
await ask(
  '10 MB tool argument',
  once({ name: 'calculate', arguments: { expression: 'x'.repeat(10 * 1024 * 1024) } }),
);
await ask(
  'arguments nested 2,000 deep',
  once({ name: 'calculate', arguments: `{"expression":${'['.repeat(2_000)}${']'.repeat(2_000)}}` }),
);
await ask(
  'arguments nested 10,000 deep',
  once({ name: 'calculate', arguments: `{"expression":${'['.repeat(10_000)}${']'.repeat(10_000)}}` }),
);
await ask('5,000 tool calls in one step', (request) =>
  request.index === 0
    ? {
        toolCalls: Array.from({ length: 5_000 }, (_, index) => ({
          name: 'calculate',
          arguments: { expression: `${index}+1` },
        })),
      }
    : { text: 'Done.' },
);

let sent = 0;
const errorBody = await rawServer((_req, res) => {
  res.writeHead(400, { 'content-type': 'application/json' });
  const piece = Buffer.alloc(1024 * 1024, 'a');
  res.write('{"error":{"message":"');
  const pump = () => {
    while (sent < 700 * 1024 * 1024) {
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    res.end('"}}');
  };
  pump();
});
results.push(
  await timed('700 MB provider error body', ['ask', '--agent', 'math', 'hi'], {
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: errorBody.baseURL,
  }),
);
results[results.length - 1]!.said +=
  ` [server sent ${Math.round(sent / 1024 / 1024)} MB before being cut off]`;
errorBody.close();

console.log('| case | exit | max RSS | time | what cadre said |\n|---|---|---|---|---|');
for (const result of results) {
  console.log(
    `| ${result.name} | ${result.code} | ${result.rssMb} MB | ${result.seconds} s | ${result.said.replaceAll('|', '\\|')} |`,
  );
}
process.exit(0);
