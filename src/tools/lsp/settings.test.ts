import { describe, expect, it } from 'vitest';
import { LspManager } from './manager.ts';
import { lspOptionsFromSettings } from './settings.ts';

describe('settings.lsp', () => {
  it('adds configured servers before the built-in TypeScript one', () => {
    const options = lspOptionsFromSettings({
      lsp: {
        idleSeconds: 60,
        servers: [{ name: 'python', command: ['pyright-langserver', '--stdio'], extensions: ['.py'] }],
      },
    });
    expect(options.idleMs).toBe(60_000);
    const manager = new LspManager(options);
    expect(manager.serverFor('app/main.py')).toMatchObject({
      name: 'python',
      command: ['pyright-langserver', '--stdio'],
    });
    expect(manager.serverFor('src/index.tsx').name).toBe('typescript');
    expect(() => manager.serverFor('notes.txt')).toThrow(/no language server is configured for ".txt"/);
  });

  it('defaults to TypeScript only and names the bad field', () => {
    expect(lspOptionsFromSettings(undefined).servers?.map((server) => server.name)).toEqual(['typescript']);
    expect(() =>
      lspOptionsFromSettings({ lsp: { servers: [{ name: 'x', command: [], extensions: ['.x'] }] } }),
    ).toThrow(/settings\.lsp\.servers\.0\.command/);
  });
});
