import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../../../test/helpers/cli.ts';
import { testServer } from '../../../test/helpers/server.ts';

function builtWebApp(): string {
  const root = tempHome();
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Cadre</title><div id="root"></div>');
  writeFileSync(join(root, 'assets', 'app.js'), 'console.log("cadre")');
  return root;
}

describe('the web app files', () => {
  it('serves index.html at / and for page paths, assets as they are, with a strict CSP', async () => {
    const { app } = await testServer([{ text: 'hi' }], { server: { webRoot: builtWebApp() } });
    const index = await app.request('/');
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<title>Cadre</title>');
    const csp = index.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    const asset = await app.request('/assets/app.js');
    expect(await asset.text()).toBe('console.log("cadre")');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(await (await app.request('/sessions/abc')).text()).toContain('<title>Cadre</title>');
    // API paths never fall through to the page.
    const missing = await app.request('/api/nothing-here');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('says how to build the web app when it is not built', async () => {
    const { app } = await testServer([{ text: 'hi' }], { server: { webRoot: tempHome() } });
    expect(await (await app.request('/')).text()).toContain('npm run build:web');
  });
});
