/**
 * The inputs of a head accepted from an upload (its skeleton, GET …/contribution-inputs/N) are written
 * as soon as the contribution is accepted, before anyone asks for them: the next turn's first
 * request is answered from disk instead of waiting for a pass over the new head's L and H.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { waitUntil } from '../helpers/wait-until.ts';

let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator();
});

after(() => coordinator?.close());

test("an accepted contribution's head has its inputs written before anyone downloads them", async () => {
  const skeleton = path.join(coordinator.dataDir, 'state', 'skeletons', 'register_1.inputs');
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
  await alice.takeTurn('register'); // a whole key, made from the head's key: no request for the inputs
  assert.equal(await alice.headIndex('register'), 1);
  await waitUntil(() => existsSync(skeleton), 'the new head inputs written', 10_000);

  const response = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs/1`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-chain-head'), '1');
  await response.arrayBuffer();
});
