// One lint for the whole repository: typescript-eslint's strict, type-checked rules, each file checked
// against the tsconfig that compiles it (the service's, the console's or the sign-in pages'). Layout is
// Prettier's job (`npm run format`), so no stylistic rules here. `npm run lint` fails on any finding.
import js from '@eslint/js';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'console/dist/', 'sign-in/dist/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Log lines and error messages are template literals; a number in one is fine.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // `(error) => reject(error)` is how callbacks are passed on; only a void in a statement's place confuses.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // The compiler already knows every name (and the browser's and Node's globals apart).
      'no-undef': 'off',
    },
  },
  {
    // One import order everywhere, fixed by `npm run lint -- --fix`: packages (Node's own among
    // them), then the project's own files, each group sorted by path.
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': ['error', { groups: [['^\\u0000'], ['^node:', '^@?\\w'], ['^\\.']] }],
    },
  },
  {
    files: ['console/src/**', 'sign-in/src/**'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Tests read the service's JSON answers and assert their shape; typing every body first would
    // repeat each assertion as a type. A missing value fails the test at the `!` as an assertion would.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
