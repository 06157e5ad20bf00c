import { describe, expect, it } from 'vitest';
import { tempHome } from '../../test/helpers/cli.ts';
import { ingestDocument } from '../documents/ingest.ts';
import { openDatabase } from '../store/database.ts';
import { Cadre } from './create-cadre.ts';

function cadre() {
  return new Cadre({ env: { CADRE_HOME: tempHome() }, cwd: tempHome(), db: openDatabase(':memory:') });
}

describe('the composed main agent', () => {
  it('mentions documents, and offers the document agents and tools, only when the user has some', async () => {
    const app = cadre();
    const before = app.runtime({ userId: 'local' }).options.agents.get('main')!;
    for (const name of ['docqa', 'analyze_document', 'search_documents', 'query_documents']) {
      expect(before.tools).not.toContain(name);
    }
    expect(before.instructions).not.toContain('## Documents');
    expect(before.instructions).not.toMatch(/docqa|analyze_document/);
    expect(before.tools).toEqual(
      expect.arrayContaining(['calculate', 'math', 'research', 'explorer', 'planner']),
    );

    await ingestDocument(app.db, 'local', {
      filename: 'notes.md',
      bytes: new TextEncoder().encode('# Tidal notes\n\nTides rise twice a day.'),
    });
    const after = app.runtime({ userId: 'local' }).options.agents.get('main')!;
    expect(after.tools).toEqual(expect.arrayContaining(['docqa', 'analyze_document', 'search_documents']));
    expect(after.instructions).toContain('Tidal notes');
    const stranger = app.runtime({ userId: 'someone-else' }).options.agents.get('main')!;
    expect(stranger.tools).not.toContain('docqa');
    app.close();
  });

  it('leaves a disabled agent out of both the tools and the prompt', () => {
    const app = cadre();
    app.saveAgentSettings('research', { enabled: false });
    const main = app.runtime().options.agents.get('main')!;
    expect(main.tools).not.toContain('research');
    expect(main.instructions).not.toContain('`research`');
    expect(main.instructions).toContain('`math`');
    app.close();
  });
});
