/**
 * What the sources start loads the compiled code when it is current: an entry of the sources
 * (scripts/source-entry.js) imports the module's dist/ build when dist/ is current, and the
 * TypeScript otherwise; a kernel thread started from the sources leaves out its parent's preloads
 * (its entry loads what it needs), and one started by the compiled app inherits its flags as Node does.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildState } from '../../scripts/build-state.js';
import { importCompiledOrSource } from '../../scripts/source-entry.js';
import { threadExecArgv } from '../../core/runtime/thread-exec-argv.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

test('an entry of the sources imports the compiled module when dist/ is current, else the TypeScript', async () => {
  const source = pathToFileURL(path.join(REPO_ROOT, 'core', 'kernel', 'generators.ts'));
  const compiled = pathToFileURL(path.join(REPO_ROOT, 'dist', 'core', 'kernel', 'generators.js'));
  const loaded = await importCompiledOrSource(source);
  // The same URL gives the same module instance: which one was loaded shows by identity.
  const expected = buildState('dist') === 'current' ? compiled : source;
  assert.equal(loaded, await import(expected.href));
});

test('a thread started from the sources drops the preloads, keeps every other flag; compiled, it inherits', () => {
  const parent = [
    '--import',
    'tsx',
    '--max-old-space-size=4096',
    '--import=./tests/setup.mjs',
    '--require',
    'a.cjs',
    '-r',
    'b.cjs',
    '--loader=c.mjs',
    '--experimental-loader',
    'd.mjs',
    '--cpu-prof',
  ];
  assert.deepEqual(threadExecArgv('file:///app/core/kernel/multi-exp.ts', parent), [
    '--max-old-space-size=4096',
    '--cpu-prof',
  ]);
  assert.equal(threadExecArgv('file:///app/dist/core/kernel/multi-exp.js', parent), undefined);
});
