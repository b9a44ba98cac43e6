/**
 * No ceremony that fails its audit only after it is finalised (issue 63, item 5). A coordinator
 * once served on a fresh folder and stopped; then `ceremony contribute --all --data DIR`, finalise
 * and publish made a ceremony whose audit fails (`audit.queue_log_mismatch`: a link with no
 * acceptance in the queue log). The local contribution is now refused at once, on a folder whose
 * queue log has begun (its file, or the coordinator's database when the file is gone), while the
 * coordinator serves it and after; and `ceremony finalise` refuses a ceremony whose queue log the
 * audit would fail (here, a link contributed before the first serve), changing nothing, with the
 * audit's own code.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  auditorConfigOf,
  devPtauHash,
  newCeremonyDir,
  projectCircuit,
  TEST_BEACON,
} from '../fixtures/ceremony-fixture.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { QUEUE_LOG_FILE } from '../../core/queue-log/queue-log-entry.ts';

const REGISTER_ONLY = { circuits: [projectCircuit('register')] };
const folders: string[] = [];
after(() => cleanUp(...folders));

async function folder(): Promise<string> {
  const dir = await newCeremonyDir({ configOverrides: REGISTER_ONLY, init: true });
  folders.push(dir);
  return dir;
}

const chainFiles = (dir: string) => readdir(path.join(dir, 'chains', 'register'));

test('served once and stopped, the folder refuses `ceremony contribute --all --data`, changing nothing', async () => {
  const dir = await folder();
  const coordinator = await startTestCoordinator({ dataDir: dir, open: false });
  // While it serves: refused too, in the process that would commit.
  await assert.rejects(contributeLocally(dir, 'register', 'operator'), (error: unknown) => {
    assert.ok(isCoordinatorError(error) && error.code === 'ceremony.outside_queue_log', String(error));
    return true;
  });
  await coordinator.close();
  const transcript = await readFile(ceremonyPaths(dir).transcriptPath);
  const before = await chainFiles(dir);

  const local = await runCli(['contribute', '--all', '--data', dir]);
  assert.equal(local.code, 1, local.stderr);
  assert.match(
    local.stderr,
    new RegExp(
      `^error \\[ceremony\\.outside_queue_log\\]: a coordinator's queue log has begun on this data folder \\(its ` +
        `queue log ${QUEUE_LOG_FILE.replace('.', '\\.')} holds 1 entry\\); .*audit\\.queue_log_mismatch.*` +
        'Contribute in the queue instead: .*ceremony contribute --coordinator URL',
      'm',
    ),
  );
  assert.equal(local.stdout, '');
  assert.deepEqual(await readFile(ceremonyPaths(dir).transcriptPath), transcript);
  assert.deepEqual(await chainFiles(dir), before);

  // The public file gone, the coordinator's database still holds the log (its next start writes it out).
  await rm(path.join(dir, QUEUE_LOG_FILE));
  const again = await runCli(['contribute', 'register', '--data', dir]);
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /\(the coordinator's database holds 1 entries of its queue log\)/);
});

test('finalise refuses a ceremony the audit would fail on its queue log, with the audit’s code', async () => {
  const dir = await folder();
  // Contributed on the folder before any coordinator served it: the log begins after this link.
  await contributeLocally(dir, 'register', 'before-the-queue');
  const coordinator = await startTestCoordinator({ dataDir: dir });
  await coordinator.close();
  const transcript = await readFile(ceremonyPaths(dir).transcriptPath);

  const refused = await runCli(['finalise', '--beacon', TEST_BEACON, '--iterations', '10', '--data', dir]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stderr,
    new RegExp(
      '^error \\[audit\\.queue_log_mismatch\\]: the audit of this ceremony would fail on its queue log ' +
        "\\(\\[audit\\.queue_log_mismatch\\] the transcript's register #1 .* has no acceptance in the queue log\\), " +
        'so it is not finalised; nothing was changed',
      'm',
    ),
  );
  assert.deepEqual(await readFile(ceremonyPaths(dir).transcriptPath), transcript);
  assert.deepEqual(await readdir(ceremonyPaths(dir).finalDir).catch(() => []), []);

  // What the refusal foresaw: the audit of the ceremony as it stands fails the same way.
  const published = `${dir}-published`;
  folders.push(published);
  assert.equal((await runCli(['publish', dir, published])).code, 0);
  // A ceremony of a few circuits: the auditor's config is the folder's own (the checkout's has nine).
  const config = auditorConfigOf(dir);
  const pin = ['--ptau-hash', await devPtauHash()];
  const audit = await runCli(['audit', published, '--in-progress', '--config', config, ...pin, '--quiet']);
  assert.equal(audit.code, 1, audit.stdout);
  assert.match(audit.stdout, /^queue log FAIL: \[audit\.queue_log_mismatch\] the transcript's register #1 /m);
});
