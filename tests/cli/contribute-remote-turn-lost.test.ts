/**
 * `ceremony contribute --coordinator URL` when the coordinator ends its turn in the middle of the
 * upload: the next heartbeat is refused, the run gives the upload up (tus terminates it) and goes
 * on from the lobby's state, here a removal by the coordinator, so it exits saying why rather than
 * waiting forever for an upload that was aborted. A heartbeat refused because the upload has just
 * completed (the turn is being verified) does not give anything up.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startGroup } from '../helpers/process-group.ts';
import { startTapProxy, type TapProxy } from '../helpers/tap-proxy.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'ceremony.js');
const TOKEN = 'coordinator-token-for-a-turn-lost-mid-upload';
let coordinator: TestCoordinator;
let proxy: TapProxy;

before(async () => {
  // A silence period of 4 s has the clients beat every second.
  coordinator = await startTestCoordinator({ env: { COORDINATOR_TOKEN: TOKEN, TURN_SILENCE_MS: '4000' } });
  proxy = await startTapProxy(coordinator.url);
});

after(async () => {
  await proxy?.close();
  await coordinator?.close();
});

test('a turn ended by the coordinator mid-upload: the run gives the upload up and exits saying why', async () => {
  const hold = proxy.once('PATCH', /^\/api\/circuits\/register\/contributions\//, 'hold', 16 * 1024);
  const run = startGroup(
    process.execPath,
    [BIN, 'contribute', '--coordinator', proxy.url, '--demo', 'lost', 'register'],
    {
      cwd: REPO_ROOT,
      env: process.env,
      label: 'ceremony contribute --demo lost',
    },
  );
  try {
    await hold.reached;
    const admin = new ContributorClient(coordinator.url);
    await admin.signInCoordinator(TOKEN);
    await admin.request('POST', '/api/admin/queue/remove', { contributorId: 'demo:lost' });
    // The limit's timer is cleared once the run has exited: left pending, it held this file's process
    // open for 30 s after its last test.
    let limit: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      run.exited,
      new Promise<undefined>((resolve) => (limit = setTimeout(resolve, 30_000, undefined))),
    ]);
    clearTimeout(limit);
    assert.ok(exited, `the run was still waiting 30 s after its turn ended:\n${run.output()}`);
    assert.equal(exited.code, 1, run.output());
    assert.match(run.output(), /your entry for register left the queue by the coordinator/);
    const terminated = proxy.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/contributions/'));
    assert.equal(terminated.length, 1, 'the upload was terminated on the coordinator');
  } finally {
    hold.release();
    await run.stop('SIGKILL').catch(() => {});
  }
});
