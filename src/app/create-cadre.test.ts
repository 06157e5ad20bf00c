import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../../test/helpers/cli.ts';
import { openSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { Cadre } from './create-cadre.ts';

function cadre() {
  return Cadre.create({
    env: { CADRE_HOME: tempHome() },
    cwd: tempHome(),
    store: openSqliteStore(':memory:'),
  });
}

describe('the composed main agent', () => {
  it('mentions documents, and offers the document agents and tools, only when the user has some', async () => {
    const app = await cadre();
    const before = (await app.runtime({ userId: 'local' })).options.agents.get('main')!;
    for (const name of ['docqa', 'analyze_document', 'search_documents', 'query_documents']) {
      expect(before.tools).not.toContain(name);
    }
    expect(before.instructions).not.toContain('## Documents');
    expect(before.instructions).not.toMatch(/docqa|analyze_document/);
    expect(before.tools).toEqual(
      expect.arrayContaining(['calculate', 'math', 'research', 'explorer', 'planner']),
    );

    await app.documents.add('local', {
      filename: 'notes.md',
      bytes: new TextEncoder().encode('# Tidal notes\n\nTides rise twice a day.'),
    });
    const after = (await app.runtime({ userId: 'local' })).options.agents.get('main')!;
    expect(after.tools).toEqual(expect.arrayContaining(['docqa', 'analyze_document', 'search_documents']));
    expect(after.instructions).toContain('Tidal notes');
    const stranger = (await app.runtime({ userId: 'someone-else' })).options.agents.get('main')!;
    expect(stranger.tools).not.toContain('docqa');
    await app.close();
  });

  it('leaves a disabled agent out of both the tools and the prompt, for that user only', async () => {
    const app = await cadre();
    await app.settings.updateAgent('local', 'research', { enabled: false });
    const main = (await app.runtime({ userId: 'local' })).options.agents.get('main')!;
    expect(main.tools).not.toContain('research');
    expect(main.instructions).not.toContain('`research`');
    expect(main.instructions).toContain('`math`');
    const other = (await app.runtime({ userId: 'other' })).options.agents.get('main')!;
    expect(other.tools).toContain('research');
    await app.close();
  });
});

describe('the per-user runtime', () => {
  /** Counts the reads `store` answers, by method, from the moment it is called. */
  function countReads(store: ReturnType<typeof openSqliteStore>) {
    const reads: string[] = [];
    for (const [name, target] of [
      ['settings', store.settings],
      ['documents', store.documents],
    ] as const) {
      for (const method of ['get', 'list', 'count'] as const) {
        const original = (target as unknown as Record<string, unknown>)[method];
        if (typeof original !== 'function') continue;
        (target as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          reads.push(`${name}.${method}`);
          return (original as (...args: unknown[]) => unknown).apply(target, args);
        };
      }
    }
    return reads;
  }

  it('is built once: a second request reads one value and gets the same runtime', async () => {
    const store = openSqliteStore(':memory:');
    const app = await Cadre.create({ env: { CADRE_HOME: tempHome() }, cwd: tempHome(), store });
    const first = await app.runtime({ userId: 'local' });
    const reads = countReads(store);
    const second = await app.runtime({ userId: 'local' });
    expect(second).toBe(first);
    expect(reads).toEqual(['settings.get']);
    // Other limits are another runtime over the same composed agents.
    const bounded = await app.runtime({ userId: 'local', limits: { maxTurns: 3 } });
    expect(bounded).not.toBe(first);
    expect(bounded.limits.maxTurns).toBe(3);
    expect(bounded.options.agents).toBe(first.options.agents);
    await app.close();
  });

  it("is built again when the user's settings or documents change, here or in another process", async () => {
    const file = join(tempHome(), 'cadre.db');
    const [store, other] = [openSqliteStore(file), openSqliteStore(file)];
    const here = await Cadre.create({ env: { CADRE_HOME: tempHome() }, cwd: tempHome(), store });
    const there = await Cadre.create({ env: { CADRE_HOME: tempHome() }, cwd: tempHome(), store: other });
    const main = async (app: Cadre) => (await app.runtime({ userId: 'local' })).options.agents.get('main')!;
    expect((await main(here)).tools).toContain('research');
    expect((await main(there)).tools).toContain('research');

    await there.settings.updateAgent('local', 'research', { enabled: false });
    expect((await main(here)).tools).not.toContain('research');

    await there.documents.add('local', {
      filename: 'tides.md',
      bytes: new TextEncoder().encode('# Tide tables\n\nHigh water at noon.'),
    });
    expect((await main(here)).instructions).toContain('Tide tables');
    const [document] = await here.documents.list('local');
    await here.documents.remove('local', document!.id);
    expect((await main(there)).instructions).not.toContain('Tide tables');

    await here.settings.updateDelegation('local', { mode: 'off' });
    expect((await main(there)).tools).not.toContain('math');
    // Someone else's change builds nothing again for this user.
    const before = await there.runtime({ userId: 'local' });
    await here.settings.updateAgent('someone-else', 'math', { enabled: false });
    expect(await there.runtime({ userId: 'local' })).toBe(before);
    await here.close();
    await there.close();
  });
});

describe("a tree's carried agents", () => {
  it('runs on the agents its asker composed, and refuses one whose tool this process lacks, saying which', async () => {
    const app = await cadre();
    const asked = await app.runtime({ userId: 'local' });
    const glossary = {
      ...asked.options.agents.get('math')!,
      name: 'glossary',
      description: 'Defines words.',
      instructions: 'You define words.',
    };
    const carried = [...asked.options.agents.values(), glossary];
    const runtime = await app.runtime({ userId: 'local', agents: carried });
    expect(runtime.agent('glossary').instructions).toBe('You define words.');
    expect(await app.runtime({ userId: 'local', agents: carried })).toBe(runtime);
    await expect(
      app.runtime({ userId: 'local', agents: [{ ...glossary, tools: ['calculate', 'ask_the_oracle'] }] }),
    ).rejects.toThrow(/no tool "ask_the_oracle", which agent "glossary" of the tree uses/);
    await expect(app.runtime({ userId: 'local', agents: [{ ...glossary, maxTurns: -1 }] })).rejects.toThrow(
      /agent "glossary" is not a valid definition: maxTurns/,
    );
    await app.close();
  });
});
