import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.ts';

/** Text written to a stream, kept for a test to read. */
export function captureStream() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  return { stream, text: () => text };
}

/** Runs `cadre ARGS` in this process through `main`, the same front door the `cadre` binary uses. */
export async function cadreInProcess(args: string[], env: Record<string, string>, cwd = process.cwd()) {
  const stdout = captureStream();
  const stderr = captureStream();
  const started = performance.now();
  const code = await main(args, { stdout: stdout.stream, stderr: stderr.stream, env, cwd });
  return { code, stdout: stdout.text(), stderr: stderr.text(), ms: performance.now() - started };
}
