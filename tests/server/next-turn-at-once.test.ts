/**
 * A move that frees a circuit grants its next turn in the same step, over HTTP against the real
 * coordinator: a turn left (POST /api/me/leave) and a refused upload's verdict each commit with
 * the next in line's grant, so the circuit never waits for the leave's or the verdict's own sync
 * and what the coordinator still does after it (the upload discarded, the file removed, the
 * verdict logged): the grant is logged before those lines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { recordedCoordinator } from '../helpers/recorded-coordinator.ts';

const CIRCUIT = 'register';
/** What a contribution adds to its head (its record in the MPC section): refused on its count, not its size. */
const CONTRIBUTION_RECORD_BYTES = 392;
const fixture = recordedCoordinator('next-turn-at-once-');

/** Where in the coordinator's log `message` first comes with `fields` among its own. */
function loggedAt(message: string, fields: Record<string, unknown>): number {
  const at = fixture.logged.findIndex(
    (line) => line.message === message && Object.entries(fields).every(([key, value]) => line.fields?.[key] === value),
  );
  assert.ok(at >= 0, `"${message}" logged with ${JSON.stringify(fields)}`);
  return at;
}

async function inLine(name: string): Promise<ContributorClient> {
  const client = new ContributorClient(fixture.coordinator.url);
  await client.signInDemo(name);
  await client.join();
  return client;
}

test('a turn left goes to the next in line in the leave’s own step, before the leave is logged', async () => {
  const leaver = await inLine('leaver');
  await leaver.waitForState(CIRCUIT, 'turn', 'the leaver’s turn');
  const next = await inLine('next-after-leave');
  await leaver.request('POST', '/api/me/leave');
  assert.equal((await next.progress(CIRCUIT)).state, 'turn', 'the next in line holds the turn');
  assert.ok(
    loggedAt('lobby turn granted', { contributorId: 'demo:next-after-leave' }) <
      loggedAt('lobby entry left by the contributor', { contributorId: 'demo:leaver' }),
    'granted in the leave’s step, not after its upload was discarded',
  );
  await next.request('POST', '/api/me/leave'); // the circuit free for the next test
});

test('a refused upload’s circuit goes to the next in line as the refusal is recorded', async () => {
  const refused = await inLine('refused');
  await refused.waitForState(CIRCUIT, 'turn', 'the turn to be refused');
  const next = await inLine('next-after-refusal');
  const index = await refused.headIndex(CIRCUIT);
  const response = await refused.fetch('GET', `/api/circuits/${CIRCUIT}/zkeys/${index}`);
  // The head and a contribution record's length (the smallest upload taken), its section count broken.
  const bytes = Buffer.concat([Buffer.from(await response.arrayBuffer()), Buffer.alloc(CONTRIBUTION_RECORD_BYTES)]);
  bytes.writeUInt32LE(0xffffffff, 8);
  const sent = await refused.sendUpload(CIRCUIT, bytes);
  assert.equal(sent.status, 204, JSON.stringify(sent));
  await next.waitForState(CIRCUIT, 'turn', 'the next in line’s turn');
  assert.equal((await refused.progress(CIRCUIT)).state, 'waiting', 'the refused contributor is back in line');
  assert.ok(
    loggedAt('lobby turn granted', { contributorId: 'demo:next-after-refusal' }) <
      loggedAt('contribution refused', { contributionId: sent.contributionId }),
    'granted as the refusal committed, not after its file was removed and it was logged',
  );
});
