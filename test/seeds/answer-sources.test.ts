import { describe, expect, it } from 'vitest';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const MADE_UP = 'https://made-up.example/pi-facts';

/** Main answers with a link that no tool of the run returned. */
const script = ({ system }: { system: string }) =>
  isMain(system) ? { text: `Pi is about 3.14159 ([Pi facts](${MADE_UP})).` } : { status: 400 };

describe("the main answer's own citations", () => {
  it('are checked and listed: top-level sources in --json, a flagged list in the CLI and in runs show', async () => {
    const { env } = await fixtureCadre(script);
    const json = await cadreInProcess(['ask', '--json', 'What is pi?'], env);
    expect(json.code).toBe(0);
    const output = JSON.parse(json.stdout);
    expect(output.sources).toEqual([{ url: MADE_UP, title: 'Pi facts', verified: false }]);
    expect(output.run.sources).toEqual(output.sources);

    const text = await cadreInProcess(['ask', 'What is pi?'], env);
    // The answer alone on stdout; the checked list on stderr, the unverified link flagged.
    expect(text.stdout).toBe(`Pi is about 3.14159 ([Pi facts](${MADE_UP})).\n`);
    expect(text.stderr).toContain('Sources (1 unverified: no tool in the run returned it):');
    expect(text.stderr).toContain(`? unverified Pi facts — ${MADE_UP}`);

    const shown = await cadreInProcess(['runs', 'show', output.run.id], env);
    expect(shown.stdout).toContain(`? unverified Pi facts — ${MADE_UP}`);
  });
});
