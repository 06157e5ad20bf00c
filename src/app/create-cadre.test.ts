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
