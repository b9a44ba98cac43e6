/**
 * What `npm run build` compiles into dist/ (tsconfig.build.json) is what the app can load, and all of
 * it: the files reachable by imports from the app's entries (`ceremony`'s cli/main.ts, `npm start`'s
 * script) and from the threads and processes the compiled code starts (`new URL(compiled ? 'x.js' :
 * 'x-entry.js')`, or `kernelThreadEntry` for the kernel's threads). Build tools (the kernel's, the
 * circuits') and the sources' own entries of the threads and processes stay out. Read from
 * `tsc --listFilesOnly`, so it holds whether or not dist/ is built.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

const APP_ENTRIES = ['cli/main.ts', 'scripts/start-test-network.ts'];
const NOT_SHIPPED = [
  'core/kernel/build-kernel-wasm.ts',
  'core/setup/compile-circuit.ts',
  'core/kernel/msm-thread.mjs',
  'core/kernel/scale-thread.mjs',
  'core/kernel/compose-thread.mjs',
  'core/kernel/fr-fft-thread.mjs',
  'worker/embedded-verifier-entry.js',
  'core/runtime/source-entry.js',
  'core/runtime/build-state.js',
];

/** Repo-relative source files tsc compiles for dist/ (declaration files aside). */
function compiledFiles(): string[] {
  const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [tsc, '-p', 'tsconfig.build.json', '--listFilesOnly'];
  const listed = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stdout + listed.stderr);
  return listed.stdout
    .split('\n')
    .filter((file) => file !== '' && !file.includes(`${path.sep}node_modules${path.sep}`) && !file.endsWith('.d.ts'))
    .map((file) => path.relative(REPO_ROOT, file));
}

/** The compiled and source-run entries of every thread or process the code starts by URL. */
function startedEntries(source: string): { compiled: string; fromSources: string }[] {
  const pattern = /import\.meta\.url\.endsWith\('\.js'\)\s*\?\s*'([^']+)'\s*:\s*'([^']+)'/g;
  const byUrl = [...source.matchAll(pattern)].map((match) => ({ compiled: match[1]!, fromSources: match[2]! }));
  // The kernel's threads, named by core/runtime/kernel-thread-entry.ts.
  const kernelPattern = /kernelThreadEntry\(import\.meta\.url,\s*'([^']+)'\)/g;
  const kernel = [...source.matchAll(kernelPattern)].map((match) => ({
    compiled: `./${match[1]!}-thread-body.js`,
    fromSources: `./${match[1]!}-thread.mjs`,
  }));
  return [...byUrl, ...kernel];
}

/** Relative module specifiers: static, re-exported, side-effect and dynamic imports. */
function relativeImports(source: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.[^'"\n]+)\1/gm;
  return [...source.matchAll(pattern)].map((match) => match[2]!);
}

/** A compiled `.js` specifier names the `.ts` source beside it. */
function sourceOf(file: string): string {
  return file.endsWith('.js') && !existsSync(path.join(REPO_ROOT, file)) ? file.replace(/\.js$/, '.ts') : file;
}

/** Every source file the app loads when compiled, walking imports and started entries from APP_ENTRIES. */
function reachable(): { files: Set<string>; started: string[] } {
  const files = new Set<string>();
  const started: string[] = [];
  const pending = [...APP_ENTRIES];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const source = readFileSync(path.join(REPO_ROOT, file), 'utf8');
    const next = relativeImports(source);
    for (const entry of startedEntries(source)) {
      const fromSources = path.resolve(REPO_ROOT, path.dirname(file), entry.fromSources);
      assert.ok(existsSync(fromSources), `${file}: ${entry.fromSources} is missing`);
      started.push(sourceOf(path.join(path.dirname(file), entry.compiled)));
      next.push(entry.compiled);
    }
    for (const specifier of next) {
      const target = sourceOf(path.join(path.dirname(file), specifier));
      if (/\.(ts|js|mjs)$/.test(target) && existsSync(path.join(REPO_ROOT, target))) pending.push(target);
    }
  }
  return { files, started };
}

test('dist/ holds exactly what the app loads: its entries, their imports, the threads and processes they start', () => {
  const compiled = compiledFiles();
  const { files, started } = reachable();
  // The five the code starts today: the MSM, scaling, compose and inverse-FFT threads, the embedded verifier.
  const threadsAndProcesses = [
    'core/kernel/msm-thread-body.ts',
    'core/kernel/compose-thread-body.ts',
    'core/kernel/scale-thread-body.ts',
    'core/kernel/fr-fft-thread-body.ts',
    'worker/embedded-verifier.ts',
  ];
  for (const entry of threadsAndProcesses) {
    assert.ok(started.includes(entry), `${entry} is not found as a started entry (found: ${started.join(', ')})`);
  }
  const unused = compiled.filter((file) => !files.has(file));
  assert.deepEqual(
    unused,
    [],
    'compiled into dist/ but loaded by nothing the app runs (if only tests, benches, ' +
      'scripts or the browser use it, add it to the exclude list of tsconfig.build.json)',
  );
  const missing = [...files].filter((file) => !compiled.includes(file));
  assert.deepEqual(missing, [], 'loaded by the compiled app but not compiled into dist/');
  for (const file of NOT_SHIPPED) {
    assert.ok(existsSync(path.join(REPO_ROOT, file)), `${file} no longer exists: update this test`);
    assert.ok(!compiled.includes(file), `${file} is shipped in dist/`);
  }
});
