/**
 * `ceremony serve`'s settings: its help lists every declared one with its default, docs/operations.md
 * holds the tables generated from the same declarations, and the yes/no settings take only `true`
 * or `false` (a typo stops the start with config.invalid naming the variable, rather than meaning no).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/run-cli.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { loadServerConfig, SERVER_SETTINGS } from '../../server/config/server-config.ts';
import { authConfigFromEnv, SIGN_IN_SETTINGS } from '../../server/auth/sign-in-settings.ts';
import { settingsByGroup, withSettingsDocBlock } from '../../server/config/settings-doc.ts';

const declared = [...Object.keys(SERVER_SETTINGS), ...Object.keys(SIGN_IN_SETTINGS)];

test('serve --help lists every setting the coordinator reads, each with its default', async () => {
  const help = await runCli(['serve', '--help'], { env: { COLUMNS: '200' } });
  assert.equal(help.code, 0);
  const stdout = help.stdout.replace(/\n {6,}/g, ' '); // each setting on one line
  // The three the hand-written list had left out, among all the others.
  for (const name of ['RATE_LIMIT_CEREMONY_READS', 'BEACON_RPC_URL', 'BEACON_CONFIRMATIONS', ...declared])
    assert.match(stdout, new RegExp(`^ {2}${name} +\\S.*\\(default: [^)]`, 'm'), `${name} is not in serve --help`);
  assert.match(stdout, /^ {2}TURN_TIMEOUT_MS +.*\(default: 10 min\)$/m);
  assert.match(stdout, /^ {2}DOWNLOAD_BUDGET_BYTES +.*\(default: 64 GiB\)$/m);
  assert.match(stdout, /^ {2}SEMAPHORE_ROOT_DURATION_MS +.*\(default: 1 h\)$/m);
  // Every setting has its doc line, in one group.
  const listed = settingsByGroup().flatMap((group) => group.settings);
  assert.deepEqual(listed.map((s) => s.name).sort(), [...declared].sort());
  for (const s of listed) assert.ok(s.doc.length > 8, `${s.name} has no doc line`);
});

test('docs/operations.md holds the settings tables generated from the declarations (npm run docs:settings)', () => {
  const page = readFileSync(path.join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
  assert.equal(page, withSettingsDocBlock(page), 'docs/operations.md is out of date: run npm run docs:settings');
  for (const name of declared) assert.ok(page.includes(`| \`${name}\``), `${name} has no row`);
});

test('the yes/no settings take true or false only; anything else is config.invalid naming the variable', async () => {
  for (const name of ['SECURE_COOKIES', 'DEMO_SIGN_IN', 'OPEN_ON_START']) {
    for (const value of ['yes', '1', 'True', 'on', ' true']) {
      assert.throws(
        () => loadServerConfig({ [name]: value }),
        (e: unknown) => isCoordinatorError(e, 'config.invalid') && e.message.includes(`${name}: must be true or false`),
        `${name}=${JSON.stringify(value)}`,
      );
    }
  }
  assert.equal(loadServerConfig({ SECURE_COOKIES: 'true' }).signIn.SECURE_COOKIES, true);
  assert.equal(loadServerConfig({ DEMO_SIGN_IN: 'false' }).signIn.DEMO_SIGN_IN, false);
  assert.equal(loadServerConfig({ DEMO_SIGN_IN: '' }).signIn.DEMO_SIGN_IN, undefined, 'empty: unset');
  // The real command stops before it opens anything, with the variable named and nothing of its value.
  const refused = await runCli(['serve', '--data', 'no-such-folder'], { env: { DEMO_SIGN_IN: 'yes-please' } });
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^error \[config\.invalid\]: sign-in configuration: DEMO_SIGN_IN: must be true or false$/m,
  );
  assert.doesNotMatch(refused.stderr, /yes-please/);
});

test('a GitHub client id without its secret (or the reverse) is config.invalid, not GitHub silently off', () => {
  for (const env of [{ GITHUB_CLIENT_ID: 'Iv1.abc' }, { GITHUB_CLIENT_SECRET: 'shh' }]) {
    assert.throws(
      () => loadServerConfig(env),
      (e: unknown) =>
        isCoordinatorError(e, 'config.invalid') &&
        /GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together/.test(e.message),
    );
  }
  assert.equal(
    loadServerConfig({ GITHUB_CLIENT_ID: 'Iv1.abc', GITHUB_CLIENT_SECRET: 'shh' }).signIn.GITHUB_CLIENT_ID,
    'Iv1.abc',
  );
  assert.throws(
    () => loadServerConfig({ GITHUB_MIN_FOLLOWERS: 'many' }),
    (e: unknown) => isCoordinatorError(e, 'config.invalid') && e.message.includes('GITHUB_MIN_FOLLOWERS'),
  );
});

test('SEMAPHORE_MAX_PROOF_CHECKS is a whole number from 1 (default 8); 0 or a word stops the start', async () => {
  const message = 'sign-in configuration: SEMAPHORE_MAX_PROOF_CHECKS: must be a whole number of at least 1';
  for (const value of ['0', 'lots']) {
    const refused = await runCli(['serve', '--data', 'no-such-folder'], {
      env: { SEMAPHORE_MAX_PROOF_CHECKS: value },
    });
    assert.equal(refused.code, 1, `SEMAPHORE_MAX_PROOF_CHECKS=${value}`);
    assert.match(refused.stderr, new RegExp(`^error \\[config\\.invalid\\]: ${message}$`, 'm'));
  }
  for (const value of ['-1', '1.5', '1e400'])
    assert.throws(
      () => loadServerConfig({ SEMAPHORE_MAX_PROOF_CHECKS: value }),
      (e: unknown) => isCoordinatorError(e, 'config.invalid') && e.message === message,
      `SEMAPHORE_MAX_PROOF_CHECKS=${value}`,
    );
  const auth = (env: Record<string, string>) =>
    authConfigFromEnv(loadServerConfig({ SEMAPHORE_GROUP_MEMBERS: '12345', ...env }).signIn, {
      publicUrl: 'http://127.0.0.1:8080',
      testNetwork: false,
      host: '127.0.0.1',
    }).semaphore?.maxProofChecks;
  assert.equal(auth({}), 8);
  assert.equal(auth({ SEMAPHORE_MAX_PROOF_CHECKS: '3' }), 3, 'reaches the sign-in router’s section');
});
