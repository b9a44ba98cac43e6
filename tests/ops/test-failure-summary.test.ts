/**
 * The failure summary `npm test` prints at its end (scripts/test-failure-summary.mjs): one block per
 * failed test, naming its file and its name with the first lines of its error, bounded in size;
 * nothing for a passing test, nor for a suite that failed only because a test inside it did.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

const REPORTER = path.join(REPO_ROOT, 'scripts', 'test-failure-summary.mjs');

const FAILING_FILE = `
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
describe('a suite', () => {
  test('inner passes', () => {});
  test('inner fails', () => assert.equal(1, 2));
});
test('top passes', () => {});
test('top throws a long message', () => {
  throw new Error('first line ' + 'x'.repeat(1000) + '\\nsecond line');
});
`;

test('the summary names each failed test with its error, and nothing else', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'failure-summary-'));
  try {
    const file = path.join(dir, 'sample.test.mjs');
    const summary = path.join(dir, 'summary.txt');
    await writeFile(file, FAILING_FILE);
    const run = spawnSync(
      process.execPath,
      ['--test', `--test-reporter=${REPORTER}`, `--test-reporter-destination=${summary}`, file],
      // A run of its own, not a subtest of this one (node:test marks its children by this variable).
      { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
    );
    assert.equal(run.status, 1, run.stderr);
    const text = await readFile(summary, 'utf8');
    const heads = text.split('\n').filter((line) => line.startsWith('✗ '));
    assert.deepEqual(heads, ['✗ sample.test.mjs › inner fails', '✗ sample.test.mjs › top throws a long message']);
    assert.match(text, /✗ sample\.test\.mjs › inner fails\n {4}AssertionError/);
    assert.match(text, /\n {4}second line\n/, 'the message keeps its lines');
    const long = text.split('\n').find((line) => line.includes('Error: first line'))!;
    assert.equal(long.trim().length, 301, 'a long line is cut at 300 characters, and says so');
    assert.ok(long.endsWith('x…'));
    assert.doesNotMatch(text, /passes|subtest failed|\(node:/, 'no passing test, suite or Node frame');
    assert.match(text, /at .*sample\.test\.mjs:\d+:\d+/, "the test's own frame is kept");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
