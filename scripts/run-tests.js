#!/usr/bin/env node
// `npm test`: prepares the shared fixtures once (so parallel test files do not all build them),
// builds what is stale (dist/ and web/dist, scripts/build.js), then runs every
// tests/**/*.test.ts with node's test runner through tsx (tests/browser/ last, one at a time).
// Pass file paths to run only those: `npm test -- tests/core/init-refusals.test.ts`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'fixtures' || name === 'helpers' ? [] : findTests(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : findTests('tests').sort();
const node = process.execPath;
const prepare = spawnSync(node, ['--import', 'tsx', 'tests/fixtures/prepare-fixtures.ts'], { stdio: 'inherit' });
if (prepare.status !== 0) process.exit(prepare.status ?? 1);
const isBrowserTest = (file) => path.normalize(file).startsWith(path.join('tests', 'browser') + path.sep);
const browserFiles = files.filter(isBrowserTest);
const otherFiles = files.filter((file) => !isBrowserTest(file));
// The tests run the compiled app (bin/ceremony.js → dist/) and the built browser app (web/dist):
// build whatever is older than its sources first (a no-op when both are current).
const build = spawnSync(node, ['scripts/build.js'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// A test that hangs fails by name after 10 minutes instead of holding the whole run until CI's limit.
const TEST_TIMEOUT_MS = 10 * 60 * 1000;
const runTests = (list, concurrency) =>
  spawnSync(
    node,
    [
      '--import',
      'tsx',
      '--import',
      './tests/setup.mjs',
      '--test',
      // TAP whatever the output is (Node 24 reports with `spec` to a pipe): CI counts its `ok` lines.
      '--test-reporter=tap',
      `--test-concurrency=${concurrency}`,
      `--test-timeout=${TEST_TIMEOUT_MS}`,
      ...list,
    ],
    { stdio: 'inherit' },
  ).status ?? 1;
let status = otherFiles.length > 0 ? runTests(otherFiles, 2) : 0;
// Browser tests last and one at a time: Chromium and its Web Workers take every core, which would
// starve the tests that act on a clock (e.g. crash-safety kills a contribution after N ms).
if (browserFiles.length > 0) status = runTests(browserFiles, 1) || status;
process.exit(status);
