import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');

describe('cadre runs rm and prune', () => {
  it('removes one tree by id, or every finished tree older than a duration', async () => {
    const { env } = await fixtureCadre(({ body, system }) => {
      if (isMain(system) && body.messages.at(-1)?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: '1 + 1' } }] };
      return { text: '2' };
    });
    const first = JSON.parse((await cadreInProcess(['ask', '--json', 'One plus one'], env)).stdout)
      .run as RunTree;
    await cadreInProcess(['ask', '--json', 'One plus one again'], env);

    const child = await cadreInProcess(['runs', 'rm', first.children[0]!.id], env);
    expect(child.code).toBe(2);
    expect(child.stderr).toContain(`cadre runs rm ${first.id}`);
    expect((await cadreInProcess(['runs', 'rm', first.id], env)).code).toBe(0);
    const gone = await cadreInProcess(['runs', 'show', first.id], env);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/no run/);
    expect((await cadreInProcess(['runs', 'rm', first.id], env)).code).toBe(2);

    const kept = await cadreInProcess(['runs', 'prune', '--older-than', '30d'], env);
    expect(kept.stdout).toMatch(/Removed 0 run trees/);
    expect(JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs).toHaveLength(1);
    const pruned = await cadreInProcess(['runs', 'prune', '--older-than', '0s', '--json'], env);
    expect(JSON.parse(pruned.stdout)).toEqual({ removed: 1 });
    expect(JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs).toEqual([]);
    const bad = await cadreInProcess(['runs', 'prune', '--older-than', 'a month'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/30d/);
  });
});
