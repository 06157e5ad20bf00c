import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/** The first page may load at most this much JavaScript, gzipped (issue 12). */
const FIRST_PAGE_LIMIT_BYTES = 250 * 1024;

/**
 * Prints the gzipped size of the JavaScript the first page loads (the entry chunk and everything it
 * imports statically; lazy chunks excluded) and fails the build past the limit, so the figure is seen on
 * every build rather than discovered later.
 */
function firstPageSize(): Plugin {
  return {
    name: 'cadre-first-page-size',
    apply: 'build',
    generateBundle(_options, bundle) {
      const entry = Object.values(bundle).find((item) => item.type === 'chunk' && item.isEntry);
      if (entry?.type !== 'chunk') return;
      const seen = new Set<string>();
      const visit = (fileName: string) => {
        if (seen.has(fileName)) return;
        seen.add(fileName);
        const chunk = bundle[fileName];
        if (chunk?.type === 'chunk') for (const imported of chunk.imports) visit(imported);
      };
      visit(entry.fileName);
      let gzipped = 0;
      for (const fileName of seen) {
        const chunk = bundle[fileName];
        if (chunk?.type === 'chunk') gzipped += gzipSync(chunk.code).length;
      }
      const kilobytes = (gzipped / 1024).toFixed(1);
      console.log(`\nCadre web: first-page JavaScript ${kilobytes} KB gzipped (limit 250 KB)`);
      if (gzipped > FIRST_PAGE_LIMIT_BYTES)
        this.error(`first-page JavaScript is ${kilobytes} KB gzipped, over 250 KB`);
    },
  };
}

/**
 * Writes a brotli (`.br`) and a gzip (`.gz`) copy beside every script, style and page the build emits, at
 * the best compression once here, so the server sends the small one a browser asks for without
 * compressing on each request (src/server/static-files.ts).
 */
function precompress(): Plugin {
  return {
    name: 'cadre-precompress',
    apply: 'build',
    writeBundle(options, bundle) {
      const folder = options.dir ?? 'dist';
      for (const fileName of Object.keys(bundle)) {
        if (!/\.(?:js|css|html|svg|json)$/.test(fileName)) continue;
        const path = join(folder, fileName);
        const content = readFileSync(path);
        writeFileSync(
          `${path}.br`,
          brotliCompressSync(content, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
            },
          }),
        );
        writeFileSync(`${path}.gz`, gzipSync(content, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react(), firstPageSize(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 800,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:4319', '/health': 'http://127.0.0.1:4319' } },
});
