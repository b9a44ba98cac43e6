/**
 * What the sources start loads the compiled code when it is current: an entry of the sources
 * (core/runtime/source-entry.js) imports the module's dist/ build when dist/ is current, and the
 * TypeScript when the build is missing or older than a source (in a checkout of the test's own);
 * a thread of ours started from the sources gets no flags (its entry loads what it needs), even in a
 * process whose flags a worker would refuse, and one started by the compiled app inherits its flags
 * as Node does.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildState } from '../../core/runtime/build-state.js';
import { importCompiledOrSource } from '../../core/runtime/source-entry.js';
import { threadExecArgv } from '../../core/runtime/thread-exec-argv.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';

test('an entry of the sources imports the compiled module when dist/ is current, else the TypeScript', async () => {
  const source = pathToFileURL(path.join(REPO_ROOT, 'core', 'kernel', 'generators.ts'));
  const compiled = pathToFileURL(path.join(REPO_ROOT, 'dist', 'core', 'kernel', 'generators.js'));
  const loaded = await importCompiledOrSource(source);
  // The same URL gives the same module instance: which one was loaded shows by identity.
  const expected = buildState('dist') === 'current' ? compiled : source;
  assert.equal(loaded, await import(expected.href));
});

test('in a checkout of its own: the build when current, else the TypeScript (no build, or an older one)', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'source-entry-'));
  try {
    await mkdir(path.join(root, 'core'), { recursive: true });
    await mkdir(path.join(root, 'dist', 'core'), { recursive: true });
    // A checkout has its build's configuration (without it there is nothing to build from).
    await writeFile(path.join(root, 'tsconfig.build.json'), '{}\n');
    const source = path.join(root, 'core', 'body.ts');
    await writeFile(source, "export const from: string = 'sources';\n");
    await writeFile(path.join(root, 'dist', 'core', 'body.js'), "export const from = 'dist';\n");
    const fromSources = (await importCompiledOrSource(pathToFileURL(source), root)) as { from: string };
    assert.equal(fromSources.from, 'sources', 'no build stamp: the sources');

    const stamp = path.join(root, 'dist', '.build-stamp');
    await writeFile(stamp, '');
    const later = new Date(Date.now() + 60_000);
    await utimes(stamp, later, later);
    const compiled = (await importCompiledOrSource(pathToFileURL(source), root)) as { from: string };
    assert.equal(compiled.from, 'dist', 'built after every source: the build');

    const latest = new Date(Date.now() + 120_000);
    await utimes(source, latest, latest);
    // A query makes another module instance of the same file: the one imported before is cached.
    const stale = (await importCompiledOrSource(new URL(`${pathToFileURL(source).href}?stale`), root)) as {
      from: string;
    };
    assert.equal(stale.from, 'sources', 'a source newer than the build: the sources');
  } finally {
    await cleanUp(root);
  }
});

test("a thread started from the sources gets no flags; compiled, it inherits its parent's", () => {
  assert.deepEqual(threadExecArgv('file:///app/core/kernel/multi-exp.ts'), []);
  assert.equal(threadExecArgv('file:///app/dist/core/kernel/multi-exp.js'), undefined);
});

test('from the sources, a thread starts in a process that carries flags a worker refuses', async () => {
  // node's test runner on Node 24 starts each file with flags such as these; passed on to a worker,
  // they throw ERR_WORKER_INVALID_EXEC_ARGV (Node 20 refuses them too).
  const module = pathToFileURL(path.join(REPO_ROOT, 'core', 'runtime', 'thread-exec-argv.ts')).href;
  const script =
    `const { threadExecArgv } = await import(${JSON.stringify(module)});\n` +
    "const { Worker } = await import('node:worker_threads');\n" +
    "const thread = new Worker(\"require('node:worker_threads').parentPort.postMessage('started')\", " +
    "{ eval: true, execArgv: threadExecArgv('file:///app/core/kernel/multi-exp.ts') });\n" +
    "thread.once('message', (message) => { console.log(message); void thread.terminate(); });\n";
  const child = spawnSync(
    process.execPath,
    ['--stack-trace-limit=50', '--v8-pool-size=2', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), 'started');
});
