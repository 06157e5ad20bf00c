import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../../test/helpers/cli.ts';
import { main } from './main.ts';

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  return { stream, text: () => text };
}

async function cli(args: string[], env: Record<string, string> = {}) {
  const stdout = capture();
  const stderr = capture();
  const code = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { CADRE_HOME: tempHome(), ...env },
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('cadre command line', () => {
  it('prints its version', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });

  it('says exactly how to set a model when none is configured', async () => {
    const result = await cli(['ask', 'hello']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/No model is configured/);
    expect(result.stderr).toMatch(/CADRE_MODEL=openai:gpt-5-mini/);
  });

  it('keeps no session of a question refused for its model', async () => {
    const home = tempHome();
    expect((await cli(['ask', 'hello'], { CADRE_HOME: home })).code).toBe(2);
    expect((await cli(['ask', 'hello'], { CADRE_HOME: home, CADRE_MODEL: 'openai:gpt-5-mini' })).code).toBe(
      2,
    );
    const sessions = await cli(['sessions', 'list', '--json'], { CADRE_HOME: home });
    expect(JSON.parse(sessions.stdout)).toMatchObject({ sessions: [] });
  });

  it('explains a compatible provider without a base URL and an unknown provider', async () => {
    expect((await cli(['ask', 'hi'], { CADRE_MODEL: 'compatible:x' })).stderr).toMatch(
      /CADRE_COMPATIBLE_BASE_URL/,
    );
    const unknown = await cli(['ask', 'hi', '--model', 'acme:x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown model provider "acme"/);
    const noKey = await cli(['ask', 'hi'], { CADRE_MODEL: 'openai:gpt-5-mini' });
    expect(noKey.stderr).toMatch(/needs OPENAI_API_KEY/);
  });

  it('lists, shows and checks agents with where each came from', async () => {
    const list = await cli(['agents', 'list', '--json']);
    const agents = JSON.parse(list.stdout).agents as Array<{ name: string; source: string }>;
    expect(agents).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'math', source: 'builtin' })]),
    );
    const show = await cli(['agents', 'show', 'math']);
    expect(show.stdout).toMatch(/calculate/);
    expect((await cli(['agents', 'show', 'nobody'])).stderr).toMatch(/no agent named "nobody"/);
    const typo = await cli(['agents', 'show', 'reserch']);
    expect(typo).toMatchObject({ code: 2 });
    expect(typo.stderr).toMatch(/no agent named "reserch"\. Did you mean "research"\?/);
    expect((await cli(['agents', 'check'])).code).toBe(0);
  });

  it('shows the context a run of an agent gets and whether it runs in the background', async () => {
    const home = tempHome();
    mkdirSync(join(home, 'agents'));
    const define = (name: string, front: string) =>
      writeFileSync(
        join(home, 'agents', `${name}.md`),
        `---\nname: ${name}\ndescription: Looks things up.\n${front}---\nLook it up.\n`,
      );
    define('scout', 'background: true\ncontext: fork\n');
    define('helper', 'background: allowed\ncontext: last-4\n');
    const shown = async (name: string) => (await cli(['agents', 'show', name], { CADRE_HOME: home })).stdout;
    expect(await shown('scout')).toMatch(
      /^context: {2}fork\nbackground: runs in the background \(every delegation to it\)$/m,
    );
    expect(await shown('helper')).toMatch(
      /^context: {2}last-4\nbackground: may run in the background \(its caller chooses\)$/m,
    );
    expect(await shown('math')).toMatch(
      /^context: {2}isolated\nbackground: no \(its caller waits for it\)$/m,
    );
    const json = async (name: string) =>
      JSON.parse((await cli(['agents', 'show', name, '--json'], { CADRE_HOME: home })).stdout);
    expect(await json('scout')).toMatchObject({ context: 'fork', background: true });
    expect(await json('helper')).toMatchObject({ context: 'last-4', background: 'allowed' });
    expect(await json('math')).toMatchObject({ context: 'isolated', background: false });
  });

  it('rejects unknown commands and unknown flags clearly', async () => {
    expect(await cli(['fly'])).toMatchObject({ code: 2 });
    const flag = await cli(['runs', 'list', '--colour']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--colour/);
    expect((await cli(['runs', 'show', 'run_missing'])).stderr).toMatch(/no run "run_missing"/);
  });

  it("says which flag was not understood, offers the closest, and what a flag's value should be", async () => {
    const typo = await cli(['ask', '--jsn', 'hi']);
    expect(typo).toMatchObject({ code: 2 });
    expect(typo.stderr).toBe(
      'cadre: unknown flag --jsn for cadre ask. Did you mean --json? (cadre ask --help lists its flags)\n',
    );
    expect(typo.stderr).not.toMatch(/positional|To specify/);
    const negative = await cli(['ask', '--timeout', '-5', 'hi']);
    expect(negative).toMatchObject({
      code: 2,
      stderr: 'cadre: --timeout -5: expected a number of seconds above 0\n',
    });
    const missing = await cli(['ask', '--session', '--json', 'hi']);
    expect(missing.stderr).toMatch(/^cadre: --session needs a value \(ID: /);
    expect(missing.stderr).not.toMatch(/ambiguous/);
    expect((await cli(['ask', '--json=yes', 'hi'])).stderr).toBe(
      'cadre: --json takes no value: write it alone.\n',
    );
  });
});
