#!/usr/bin/env node
// `npm test`: prepares the shared fixtures once (so parallel test files do not all build them),
// builds what is stale (dist/ and web/dist, scripts/build.js), then runs every
// tests/**/*.test.ts with node's test runner through tsx (tests/browser/ after the others, two at a
// time, and the container test last, alone).
// Pass file paths to run only those: `npm test -- tests/core/init-refusals.test.ts`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
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
// V8's compile cache for every process of the run (test files, and the CLI runs, servers and workers
// they start), in a private folder removed at the end: a run loads the same modules (the app,
// snarkjs, Express…) in several hundred processes, and compiling them again was about a sixth of a
// CLI-heavy file's CPU. Only this run reads it, so nothing another user or run wrote is loaded.
const compileCache = mkdtempSync(path.join(os.tmpdir(), 'ceremony-test-compile-cache-'));
process.env.NODE_COMPILE_CACHE = compileCache;
process.on('exit', () => rmSync(compileCache, { recursive: true, force: true }));
const prepare = spawnSync(node, ['--import', 'tsx', 'tests/fixtures/prepare-fixtures.ts'], { stdio: 'inherit' });
if (prepare.status !== 0) process.exit(prepare.status ?? 1);
const isBrowserTest = (file) => path.normalize(file).startsWith(path.join('tests', 'browser') + path.sep);
// The container test builds images (a cold build compiles for many minutes) and runs a stack that
// acts on clocks: alone, so neither it nor the tests beside it are starved.
const isContainerTest = (file) => path.normalize(file) === path.join('tests', 'ops', 'compose-stack.test.ts');
const browserFiles = files.filter(isBrowserTest);
const containerFiles = files.filter(isContainerTest);
const otherFiles = files.filter((file) => !isBrowserTest(file) && !isContainerTest(file));
// The tests run the compiled app (bin/ceremony.js → dist/) and the built browser app (web/dist):
// build whatever is older than its sources first (a no-op when both are current).
const build = spawnSync(node, ['scripts/build.js'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// A test that hangs fails by name after 10 minutes instead of holding the whole run until CI's limit.
const TEST_TIMEOUT_MS = 10 * 60 * 1000;
// Each run also writes its failures, one short block each, to a file printed at the very end: a CI
// log is read from its tail, where TAP leaves the last test that passed.
const summaryDir = mkdtempSync(path.join(os.tmpdir(), 'ceremony-test-failures-'));
let runs = 0;
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
      '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/test-failure-summary.mjs',
      `--test-reporter-destination=${path.join(summaryDir, `run-${++runs}.txt`)}`,
      `--test-concurrency=${concurrency}`,
      `--test-timeout=${TEST_TIMEOUT_MS}`,
      ...list,
    ],
    { stdio: 'inherit' },
  ).status ?? 1;
let status = otherFiles.length > 0 ? runTests(otherFiles, 2) : 0;
// Browser tests after the others: Chromium and its Web Workers take every core, which would starve
// the Node tests that act on a clock (e.g. crash-safety kills a contribution after N ms). Two at a
// time among themselves: one alone left a third of both cores idle (page loads, a coordinator's
// start), and their clocks (a presence grace, a held request) leave room for a second browser.
if (browserFiles.length > 0) status = runTests(browserFiles, 2) || status;
if (containerFiles.length > 0) status = runTests(containerFiles, 1) || status;
const failures = readdirSync(summaryDir)
  .sort()
  .map((name) => readFileSync(path.join(summaryDir, name), 'utf8'))
  .join('');
rmSync(summaryDir, { recursive: true, force: true });
if (failures.length > 0) process.stdout.write(`\n# Failed tests (their first error lines):\n${failures}`);
else if (status !== 0) process.stdout.write(`\n# The test runner exited ${status} with no failed test named.\n`);
process.exit(status);
