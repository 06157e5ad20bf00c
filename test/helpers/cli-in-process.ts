import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { onTestFinished } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { type FixtureScript, startOpenAIServer } from '../fixtures/openai-server.ts';
import { captureStream } from './capture.ts';
import { tempHome, testModeDatabase } from './cli.ts';

/**
 * Runs `cadre ARGS` in this process through `main`, the same front door the `cadre` binary uses. `stdin` is
 * what the command reads as its input (`ask -`, the lines of `chat`); a pipe into a real process, which
 * `ask` joins to its question, is the end-to-end tier's (test/e2e/cli-pipes.test.ts).
 */
export async function cadreInProcess(
  args: string[],
  env: Record<string, string>,
  cwd = process.cwd(),
  stdin?: string,
) {
  const stdout = captureStream();
  const stderr = captureStream();
  const started = performance.now();
  const code = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { ...testModeDatabase(env), ...env },
    cwd,
    ...(stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(stdin)]) }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text(), ms: performance.now() - started };
}

/**
 * A local OpenAI-compatible server answering from `script`, and a fresh CADRE_HOME whose config.json is
 * `config`, wired as `cadre` sees them through the environment. The server closes when the test ends.
 */
export async function fixtureCadre(script: FixtureScript, config: object = {}) {
  const server = await startOpenAIServer(script);
  onTestFinished(() => server.close());
  const home = tempHome();
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const env = {
    CADRE_HOME: home,
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  return { server, env, home };
}
