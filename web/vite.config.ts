import { gzipSync } from 'node:zlib';
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

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react(), firstPageSize()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 800,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:4319', '/health': 'http://127.0.0.1:4319' } },
});
