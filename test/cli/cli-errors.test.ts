import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { captureStream } from '../helpers/capture.ts';
import { tempHome } from '../helpers/cli.ts';

async function cli(args: string[], env: Record<string, string>) {
  const stdout = captureStream();
  const stderr = captureStream();
  const code = await main(args, { stdout: stdout.stream, stderr: stderr.stream, env });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('errors that name their source', () => {
  it('a bad CADRE_COMPATIBLE_BASE_URL is a configuration error naming the variable; no run is stored', async () => {
    const env = {
      CADRE_HOME: tempHome(),
      CADRE_MODEL: 'compatible:m',
      CADRE_COMPATIBLE_BASE_URL: 'localhost:8000/v1',
    };
    const result = await cli(['ask', 'hi'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/CADRE_COMPATIBLE_BASE_URL="localhost:8000\/v1" is not an http\(s\) URL/);
    expect(JSON.parse((await cli(['runs', 'list', '--json'], env)).stdout).runs).toEqual([]);
  });

  it('a corrupt cadre.db names the file and says what to do', async () => {
    const home = tempHome();
    const file = join(home, 'cadre.db');
    writeFileSync(file, 'this is not a database, it is a shopping list: eggs, milk, bread'.repeat(100));
    const result = await cli(['runs', 'list'], { CADRE_HOME: home });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toMatch(/move it aside/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('a --workspace that does not exist is named', async () => {
    const env = {
      CADRE_HOME: tempHome(),
      CADRE_MODEL: 'compatible:m',
      CADRE_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
    };
    const missing = join(tempHome(), 'no-such-project');
    for (const command of [['ask', 'hi'], ['chat']]) {
      const result = await cli([...command, '--workspace', missing], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--workspace ${missing}: no such folder`);
    }
  });

  it('the no-model message names the real config file', async () => {
    const home = tempHome();
    const result = await cli(['ask', 'hi'], { CADRE_HOME: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(home, 'config.json'));
  });

  it('not found exits 2 everywhere', async () => {
    const env = { CADRE_HOME: tempHome() };
    for (const command of [
      ['runs', 'show', 'run_nope'],
      ['runs', 'rm', 'run_nope'],
      ['docs', 'rm', 'doc_nope'],
      ['agents', 'show', 'nobody'],
      ['chat', '--session', 'ses_nope'],
      ['ask', '--session', 'ses_nope', 'hi'],
    ]) {
      const result = await cli(command, {
        ...env,
        CADRE_MODEL: 'compatible:m',
        CADRE_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
      });
      expect([command.join(' '), result.code]).toEqual([command.join(' '), 2]);
    }
  });
});
