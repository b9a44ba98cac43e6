/**
 * An upload handed in while a sweep of the uploads is under way is not deleted by that sweep. The
 * sweep reads which candidates await their verdict once, before it walks the folders; an upload
 * still being finished then, and handed in (verifying) by the time the walk reaches it, is neither
 * finishing nor in that list. It was deleted: the verifier found no file, and an honest contributor
 * was refused (`verification.unavailable`, a missed turn), as happened in the hostile-lobby bench.
 * The deletion itself, under the upload's lock, asks again.
 *
 * Over real HTTP and tus against a real coordinator whose verifier (a `ceremony worker` on Redis)
 * starts only once the sweep is over, so the upload stays verifying meanwhile. The sweep's early
 * read is played by answering the first question with the list as it was before the hand-in.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient, type MeView } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

const CIRCUIT = 'register';
let coordinator: TestCoordinator;
let alice: ContributorClient;

before(async () => {
  coordinator = await startTestCoordinator({ redis: true, tickIntervalMs: 100 });
  alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
});

after(() => coordinator?.close());

const stateOf = (me: MeView) => me.status.circuits.find((c) => c.circuit === CIRCUIT)?.state;

/** The data files of the circuit's uploads (tus keeps `<id>` and `<id>.json`). */
async function uploadFiles(): Promise<string[]> {
  const entries = await readdir(path.join(coordinator.dataDir, 'uploads', CIRCUIT)).catch(() => []);
  return entries.filter((name) => !name.endsWith('.json')).sort();
}

test('a sweep that began before an upload was handed in leaves it to its verdict', async () => {
  await alice.waitFor((me) => stateOf(me) === 'turn', 'the turn');
  const contribution = await alice.makeContribution(CIRCUIT);
  await alice.upload(CIRCUIT, await readFile(contribution.file));
  await alice.waitFor((me) => stateOf(me) === 'verifying', 'verifying');
  const handedIn = await uploadFiles();
  assert.equal(handedIn.length, 1);

  const { service } = coordinator;
  const awaitingNow = service.candidatesAwaitingVerdict.bind(service);
  let asked = 0;
  // The sweep's first question answered as before the hand-in; any later one as things are.
  service.candidatesAwaitingVerdict = () => (asked++ === 0 ? new Set<string>() : awaitingNow());
  try {
    assert.equal(await coordinator.uploads.sweepExpired(), 0, 'the sweep deleted nothing');
  } finally {
    service.candidatesAwaitingVerdict = awaitingNow;
  }
  assert.ok(asked >= 1, 'the sweep asked which candidates await their verdict');
  assert.deepEqual(await uploadFiles(), handedIn, 'the upload handed in is still there');

  await coordinator.startWorker();
  const me = await alice.waitFor((m) => stateOf(m) === 'accepted', 'accepted', 90_000);
  assert.equal(me.status.circuits.find((c) => c.circuit === CIRCUIT)!.contributionHash, contribution.contributionHash);
});
