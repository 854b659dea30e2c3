import { defineConfig } from 'vite';

/**
 * The hosted sign-in pages, built by `npm run build:sign-in` into sign-in/dist. The service serves
 * index.html at /sign-in, /register, /reset-password and /callback, and the hashed files beside it
 * under /experience-assets/.
 */
export default defineConfig({
  base: '/experience-assets/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: '',
    target: 'es2022',
    // The polyfill would be an inline script, which the pages' CSP forbids; browsers we serve have modulepreload.
    modulePreload: { polyfill: false },
  },
});
