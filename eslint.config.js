// ESLint flat config: typescript-eslint with type information, so that a dropped promise
// (a lost job) is an error, not a warning.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'drizzle/',
      'drizzle-pg/',
      'coverage/',
      'eslint.config.js',
      // Task bundles: pinned by base_commit and patches, never linted or reformatted.
      'examples/*/environment/',
      'examples/*/tests/',
      'examples/*/solution/',
      'test/fixtures/bundles/',
      // A runner's JavaScript part: a fragment of the runner's program, which defines what the
      // program calls; tested through the runners (test/runners/).
      'src/runners/core/*.js',
      // A fragment of the runners' programs (fs, net and the rest are the program's): no module.
      'src/runners/core/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The SQLite store wraps synchronous better-sqlite3 calls in the async JobStore contract.
    files: ['src/queue/sqlite/store.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // Tests write handlers as async functions for readability, and use vitest's asymmetric
    // matchers (typed any) inside expectations.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    files: ['**/*.js', 'bin/**'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly' },
      parserOptions: { projectService: false },
    },
  },
  {
    // The status page's scripts run in the browser as ES modules, with no build step.
    files: ['src/api/page/**/*.js'],
    languageOptions: { globals: { ...globals.browser }, sourceType: 'module' },
  },
);
