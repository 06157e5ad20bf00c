import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

const cadre = (argv: string[], home: string) => cadreInProcess(argv, { CADRE_HOME: home }, home);

/** Control characters but newline: what a terminal would act on instead of printing. */
const controls = (text: string) =>
  [...text].filter((char) => char !== '\n' && (char < ' ' || (char >= '\x7f' && char <= '\x9f')));

describe('document text printed to a terminal', () => {
  it('carries no escape sequences from titles, tags or snippets', async () => {
    const home = tempHome();
    const file = join(home, 'evil.md');
    writeFileSync(
      file,
      '# Quarterly \x1b]0;owned\x07report \x1b[2J\x1b[31mred\x1b[0m \x9b31m\x07\n\nThe audit found \x1b[1Athree issues.\n',
    );
    expect((await cadre(['docs', 'add', '--tags', 'x\x1b[5mblink', file], home)).code).toBe(0);
    const list = await cadre(['docs', 'list'], home);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('Quarterly report red');
    expect(controls(list.stdout)).toEqual([]);
    const search = await cadre(['docs', 'search', 'audit'], home);
    expect(search.stdout).toContain('three issues');
    expect(controls(search.stdout)).toEqual([]);
    // Scripts asking for JSON still get the title exactly as stored (JSON escapes it).
    const json = JSON.parse((await cadre(['docs', 'list', '--json'], home)).stdout) as Array<{
      title: string;
    }>;
    expect(json[0]!.title).toContain('Quarterly');
  });
});
