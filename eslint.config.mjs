// Flat config: typescript-eslint's recommended rules, plus the layering rule of the design:
// src/core, src/mcp and src/cli run in plain Node and never import `vscode`.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-host/**', '.vscode-test/**', '.test-results/**', '.demo/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports', disallowTypeAnnotations: false }],
    },
  },
  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.mocha } },
  },
  {
    // Plain CommonJS scripts run by Node directly (the test S3 server runs outside tsx).
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/e2e/**/*.mjs'],
    // Functions passed to page.evaluate run in the browser.
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['media/**/*.js'],
    // Webview scripts run in the webview's browser context.
    languageOptions: { globals: { ...globals.browser, acquireVsCodeApi: 'readonly' } },
  },
  {
    files: ['src/core/**', 'src/mcp/**', 'src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/core, src/mcp and src/cli run in plain Node: keep VS Code APIs in src/extension.' }],
        },
      ],
    },
  },
);
