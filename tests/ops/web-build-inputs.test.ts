/**
 * The browser app's build is stale as soon as any file it was built from changes, wherever that file
 * lives: Vite records the module graph of the pages and of the contribution workers
 * (web/dist/.build-inputs.json, vite.config.ts), and core/runtime/build-state.js compares each recorded
 * file with the build's stamp. Read from the build `npm test` makes before the tests; the staleness
 * checks run on a copy of those files, so the checkout's own build is left as it is.
 */
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { buildState, PARTS } from '../../core/runtime/build-state.js';

const WEB = PARTS.web;
const scratch = mkdtempSync(path.join(tmpdir(), 'web-build-inputs-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function recordedInputs(): string[] {
  const file = path.join(REPO_ROOT, WEB.inputs);
  assert.ok(existsSync(file), `${WEB.inputs} is missing: npm test builds web/dist first (node scripts/build.js web)`);
  return JSON.parse(readFileSync(file, 'utf8')) as string[];
}

/** A copy of the checkout's web build inputs, pages and configuration, built (stamped) an hour ago. */
function copyOfBuild(inputs: string[]): { root: string; stampTime: Date } {
  const root = mkdtempSync(path.join(scratch, 'root-'));
  const past = new Date(Date.now() - 3_600_000);
  const stampTime = new Date(past.getTime() + 60_000);
  const place = (relative: string, from?: string) => {
    const target = path.join(root, relative);
    mkdirSync(path.dirname(target), { recursive: true });
    if (from === undefined) writeFileSync(target, '');
    else copyFileSync(from, target);
    utimesSync(target, past, past);
  };
  const sourceFiles = WEB.sources.flatMap((source) => {
    const full = path.join(REPO_ROOT, source);
    return statSync(full).isDirectory() ? [] : [source];
  });
  for (const file of [...inputs, ...sourceFiles]) place(file, path.join(REPO_ROOT, file));
  place(WEB.inputs, path.join(REPO_ROOT, WEB.inputs));
  place(WEB.stamp);
  utimesSync(path.join(root, WEB.stamp), stampTime, stampTime);
  // Folders last: creating their files moved their mtimes.
  const ageFolders = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) ageFolders(path.join(dir, entry.name));
    }
    utimesSync(dir, past, past);
  };
  ageFolders(root);
  return { root, stampTime };
}

test("the recorded inputs are the bundle's imports, core/ and the workers' included, where build-state reads", () => {
  const inputs = recordedInputs();
  for (const file of [
    'web/index.html',
    'web/src/pages/contributor-page.ts',
    'web/src/contribute/kernel-worker.ts', // a worker bundle's entry
    'core/kernel/g1-scale-kernel.ts', // imported by that worker
    'core/crypto/bn254-moduli.ts', // the file the hand-kept list missed
  ]) {
    assert.ok(inputs.includes(file), `${file} is not among the recorded inputs: ${inputs.join(', ')}`);
  }
  for (const file of inputs) {
    assert.ok(existsSync(path.join(REPO_ROOT, file)), `${file} is recorded but does not exist`);
  }
  const outside = inputs.filter((file) => file.includes('node_modules') || file.startsWith('..'));
  assert.deepEqual(outside, [], 'only files of this repository');
  const config = readFileSync(path.join(REPO_ROOT, 'vite.config.ts'), 'utf8');
  assert.match(config, new RegExp(`BUILD_INPUTS_FILE = '${path.basename(WEB.inputs).replace('.', '\\.')}'`));
  assert.equal(path.dirname(WEB.inputs), WEB.out);
});

test('a change to any file the bundle was built from makes the web build stale; other files do not', () => {
  const inputs = recordedInputs();
  const { root, stampTime } = copyOfBuild(inputs);
  assert.equal(buildState('web', root), 'current');
  const later = new Date(stampTime.getTime() + 1_000);
  const earlier = new Date(stampTime.getTime() - 30_000);
  for (const file of inputs) {
    utimesSync(path.join(root, file), later, later);
    assert.equal(buildState('web', root), 'stale', `an edit of ${file} left the build current`);
    utimesSync(path.join(root, file), earlier, earlier);
  }
  assert.equal(buildState('web', root), 'current');

  // Not imported by the bundle (only its types are): an edit leaves the build current.
  const server = path.join(root, 'server', 'app.ts');
  mkdirSync(path.dirname(server), { recursive: true });
  writeFileSync(server, '// an edit\n');
  const typesOnly = path.join(root, 'core', 'kernel', 'scale-messages.ts');
  assert.ok(
    !inputs.includes('core/kernel/scale-messages.ts'),
    'core/kernel/scale-messages.ts is imported for its types only',
  );
  writeFileSync(typesOnly, '// an edit\n');
  assert.equal(buildState('web', root), 'current');
});

test('a build without a readable record, or whose recorded input is gone, is stale', () => {
  const inputs = recordedInputs();
  const { root } = copyOfBuild(inputs);
  const moduli = path.join(root, 'core', 'crypto', 'bn254-moduli.ts');
  rmSync(moduli);
  assert.equal(buildState('web', root), 'stale');
  copyFileSync(path.join(REPO_ROOT, 'core', 'crypto', 'bn254-moduli.ts'), moduli);
  utimesSync(moduli, new Date(0), new Date(0));
  assert.equal(buildState('web', root), 'current');
  writeFileSync(path.join(root, WEB.inputs), 'not json');
  utimesSync(path.join(root, WEB.inputs), new Date(0), new Date(0));
  assert.equal(buildState('web', root), 'stale');
  rmSync(path.join(root, WEB.inputs));
  assert.equal(buildState('web', root), 'stale');
});

test('a folder without the build configuration has no sources to build: the image only carries core/runtime/', () => {
  const root = mkdtempSync(path.join(scratch, 'installed-'));
  mkdirSync(path.join(root, 'core', 'runtime'), { recursive: true });
  copyFileSync(
    path.join(REPO_ROOT, 'core', 'runtime', 'build-state.js'),
    path.join(root, 'core', 'runtime', 'build-state.js'),
  );
  assert.equal(buildState('dist', root), 'no-sources', 'the image’s dependency stage and its runtime stage');
  assert.equal(buildState('web', root), 'no-sources');
  writeFileSync(path.join(root, PARTS.dist.config), '{}');
  assert.equal(buildState('dist', root), 'missing', 'with its configuration, a part never built is missing');
});
