// The lint rules `npm test` enforces: a small set, each catching a real bug class rather than a
// style (Prettier owns the style). Type-aware, so a promise nobody awaits is found across modules.
// The layers of docs/architecture.md are rules here too, so a forbidden import fails at its own
// line; tests/ops/layer-imports.test.ts checks the same rules on every specifier, dynamic imports
// included, which this rule does not see.
import tseslint from 'typescript-eslint';

/** Which layers each layer may not import (relative specifiers: `../server/…`, `../../worker/…`), and why. */
const LAYER_BOUNDARIES = {
  core: {
    forbidden: ['client', 'server', 'worker', 'cli', 'web'],
    why: 'core/ is the ceremony itself and imports nothing outside core/',
  },
  client: {
    forbidden: ['server', 'worker', 'cli', 'web'],
    why: 'client/ is the protocol the page and the terminal share: it speaks HTTP and reads core/, nothing else',
  },
  server: {
    forbidden: ['client', 'worker', 'cli', 'web'],
    why: 'server/ and worker/ never import each other: what they share is the verifier contract in core/',
  },
  worker: {
    forbidden: ['client', 'server', 'cli', 'web'],
    why: 'server/ and worker/ never import each other: what they share is the verifier contract in core/',
  },
  cli: {
    forbidden: ['web'],
    why: 'the terminal client shares the protocol with the browser app through client/, never web/',
  },
  web: {
    forbidden: ['server', 'worker', 'cli'],
    why: 'the browser app speaks to the coordinator over HTTP; the shapes both sides read live in core/',
  },
};

const layerBoundaries = Object.entries(LAYER_BOUNDARIES).map(([layer, { forbidden, why }]) => ({
  files: [`${layer}/**/*.{ts,js,mjs}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\.\\./)+(${forbidden.join('|')})/`,
            message: `${layer}/ may not import ${forbidden.join(', ')}: ${why}.`,
          },
          // Node's built-ins never reach a browser bundle.
          ...(layer === 'web' || layer === 'client'
            ? [{ regex: '^node:', message: `${layer}/ runs in a browser: no Node built-ins.` }]
            : []),
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'dist.tmp-*/', 'web/dist/', '.fixture-cache/', 'scratch/', 'test-artifacts/'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise left floating loses its rejection (an unhandled rejection ends the process, or
      // nothing at all is reported). node:test's test()/describe() return promises the runner awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      // An async function where a callback's result is tested (if, filter, &&) is always truthy.
      // Passing one as a void callback (event handlers, Express) is deliberate here: each catches its errors.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A type imported as a value keeps a module (and what it loads: better-sqlite3, node:fs) in
      // the import graph of whoever only needed its shape, the browser bundle included.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  ...layerBoundaries,
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }] },
  },
);
