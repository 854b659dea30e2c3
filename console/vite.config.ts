import { defineConfig } from 'vite';

/** Built by `npm run build:console` into console/dist, which the service serves at /console. */
export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill would be an inline script, which the console's CSP forbids; browsers we serve have modulepreload.
    modulePreload: { polyfill: false },
  },
});
