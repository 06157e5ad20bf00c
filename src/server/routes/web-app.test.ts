import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
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

  it('sends the brotli or gzip copy the build made as the browser asks, and caches hashed assets for a year', async () => {
    const root = builtWebApp();
    const script = 'console.log("cadre");'.repeat(100);
    writeFileSync(join(root, 'assets', 'app-Ab12.js'), script);
    writeFileSync(join(root, 'assets', 'app-Ab12.js.br'), brotliCompressSync(script));
    writeFileSync(join(root, 'assets', 'app-Ab12.js.gz'), gzipSync(script));
    const { app } = await testServer([{ text: 'hi' }], { server: { webRoot: root } });
    const get = (path: string, encoding?: string) =>
      app.request(path, encoding === undefined ? {} : { headers: { 'accept-encoding': encoding } });

    // A browser's usual header names gzip first at equal weight: brotli is smaller, so brotli.
    const brotli = await get('/assets/app-Ab12.js', 'gzip, deflate, br, zstd');
    expect(brotli.headers.get('content-encoding')).toBe('br');
    expect(brotli.headers.get('content-type')).toMatch(/javascript/);
    expect(brotli.headers.get('vary')).toBe('Accept-Encoding');
    expect(brotli.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(Buffer.from(await brotli.arrayBuffer())).toString()).toBe(script);

    const gzip = await get('/assets/app-Ab12.js', 'gzip, br;q=0');
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(Number(gzip.headers.get('content-length'))).toBeLessThan(script.length);
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString()).toBe(script);

    for (const plain of [await get('/assets/app-Ab12.js'), await get('/assets/app-Ab12.js', 'identity')]) {
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(await plain.text()).toBe(script);
    }
    // A file the build did not compress goes as it is, still marked as varying.
    const uncompressed = await get('/assets/app.js', 'br');
    expect(uncompressed.headers.get('content-encoding')).toBeNull();
    expect(await uncompressed.text()).toBe('console.log("cadre")');

    // The page itself is revalidated on every visit, so a new build is seen at once.
    for (const page of [await get('/', 'br'), await get('/sessions/abc', 'br')]) {
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(await page.text()).toContain('<title>Cadre</title>');
    }
    // An asset that is not there (an old page asking for an old build's script) is a 404, never the page.
    const gone = await get('/assets/app-Old1.js', 'br');
    expect(gone.status).toBe(404);
    expect(gone.headers.get('cache-control')).toBeNull();
    expect((await get('/assets/../index.html')).headers.get('cache-control')).not.toBe(
      'public, max-age=31536000, immutable',
    );
  });

  it('says how to build the web app when it is not built', async () => {
    const { app } = await testServer([{ text: 'hi' }], { server: { webRoot: tempHome() } });
    expect(await (await app.request('/')).text()).toContain('npm run build:web');
  });
});
