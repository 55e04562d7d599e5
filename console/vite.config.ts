/**
 * The console's build: Vite bundles `console/src` into hashed files under `dist/console/`, which the
 * registry serves at `/console` (src/http/console-routes.ts). JSX compiles to Preact's runtime.
 * `node console/build.mjs` runs this build only when a source is newer than its output.
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

const root = fileURLToPath(new URL('.', import.meta.url))

export default defineConfig({
  root,
  base: '/console/',
  // Nothing is copied verbatim: every file the console uses is imported, so its name carries a hash.
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Chromium, Firefox and Safari all preload modules natively: no polyfill in the entry chunk.
    modulePreload: { polyfill: false },
    // Every asset is a file: an inlined data: URL would need a wider Content-Security-Policy.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
})
