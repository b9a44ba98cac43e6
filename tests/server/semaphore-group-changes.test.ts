/**
 * Semaphore group changes through the real coordinator over HTTP, with real proofs (official
 * artifacts) and restarts on one SQLite database, as a coordinator changes SEMAPHORE_GROUP_MEMBERS:
 * - an addition keeps the previous root usable (within SEMAPHORE_ROOT_DURATION_MS);
 * - a removal makes every earlier root unacceptable at once: the removed member's proof on the
 *   root from before is refused with auth.root_expired, a remaining member signs in on the new
 *   root; a later restart does not revive the old root;
 * - a member who signed out signs in again as the same anonymous contributor (same nullifier,
 *   new session), and a used challenge still cannot be replayed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Group } from '@semaphore-protocol/group';
import { Identity } from '@semaphore-protocol/identity';
import { generateProof } from '@semaphore-protocol/proof';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { ManualClock } from '../../server/clock.ts';

const artifactsDir = path.dirname(createRequire(import.meta.url).resolve('@zk-kit/semaphore-artifacts/package.json'));
const artifactsFor = (depth: number) => ({
  wasm: path.join(artifactsDir, `semaphore-${depth}.wasm`),
  zkey: path.join(artifactsDir, `semaphore-${depth}.zkey`),
});

const alice = new Identity('alice: group changes suite');
const bob = new Identity('bob: group changes suite');
const carol = new Identity('carol: group changes suite');
const HOUR = 60 * 60_000;
const clock = new ManualClock(Date.now());
let dataDir: string;
let coordinator: TestCoordinator | undefined;

async function startWith(members: Identity[]): Promise<TestCoordinator> {
  await coordinator?.close();
  coordinator = await startTestCoordinator({
    dataDir,
    open: false,
    env: {
      DEMO_SIGN_IN: 'false',
      SEMAPHORE_GROUP_MEMBERS: members.map((m) => m.commitment.toString()).join(','),
      SEMAPHORE_ROOT_DURATION_MS: String(HOUR),
    },
    clock,
    tickIntervalMs: 60_000,
  });
  return coordinator;
}

/** A fresh challenge from the running coordinator, and a proof of `who` in `members` answering it. */
async function proofFor(who: Identity, members: Identity[]) {
  const client = new ContributorClient(coordinator!.url);
  const { challenge, scope } = await client.request<{ challenge: string; scope: string }>(
    'POST',
    '/auth/semaphore/challenge',
  );
  const group = new Group(members.map((m) => m.commitment));
  return generateProof(who, group, challenge, scope, undefined, artifactsFor(Math.max(1, group.depth)));
}

async function signIn(
  client: ContributorClient,
  proof: unknown,
): Promise<{ principal: { id: string }; csrfToken: string }> {
  const body = await client.request<{ principal: { id: string }; csrfToken: string }>('POST', '/auth/semaphore', {
    proof,
  });
  client.csrfToken = body.csrfToken;
  return body;
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string | undefined }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, code: error.code };
    throw error;
  }
  assert.fail('expected a refusal');
}

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
});

after(async () => {
  await coordinator?.close();
  await cleanUp(dataDir);
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
});

test(
  'an addition keeps the previous root for its duration; a removal ends every earlier root at once, across restarts',
  { timeout: 180_000 },
  async () => {
    await startWith([alice]);
    const earlyProof = await proofFor(alice, [alice]);

    // Bob and carol are added: alice's proof, made before, on the previous root still signs her in.
    let server = await startWith([alice, bob, carol]);
    const aliceId = (await signIn(new ContributorClient(server.url), earlyProof)).principal.id;
    assert.equal(aliceId, `semaphore:${earlyProof.nullifier}`);

    // Bob proves his membership of the grown group, then is removed before he submits.
    const bobProof = await proofFor(bob, [alice, bob, carol]);
    const aliceBeforeRemoval = await proofFor(alice, [alice, bob, carol]);
    server = await startWith([alice, carol]);
    let bobClient = new ContributorClient(server.url);
    const aliceClient = new ContributorClient(server.url);
    assert.deepEqual(await refusal(signIn(bobClient, bobProof)), { status: 401, code: 'auth.root_expired' });
    // Within the hour, yet refused: the removal ended the window of every earlier root.
    assert.deepEqual(await refusal(signIn(aliceClient, aliceBeforeRemoval)), {
      status: 401,
      code: 'auth.root_expired',
    });
    const aliceNow = await signIn(aliceClient, await proofFor(alice, [alice, carol]));
    assert.equal(aliceNow.principal.id, aliceId, 'the same identity is the same contributor');

    // A restart with the same members does not bring the old root back.
    server = await startWith([alice, carol]);
    bobClient = new ContributorClient(server.url);
    const bobAgain = await proofFor(bob, [alice, bob, carol]);
    assert.deepEqual(await refusal(signIn(bobClient, bobAgain)), { status: 401, code: 'auth.root_expired' });
    // A root that was never this group's keeps its own code.
    const strangerProof = await proofFor(bob, [bob, new Identity('nobody')]);
    assert.deepEqual(await refusal(signIn(bobClient, strangerProof)), { status: 401, code: 'auth.unknown_root' });
  },
);

test('an addition’s grace period ends after SEMAPHORE_ROOT_DURATION_MS', { timeout: 120_000 }, async () => {
  await startWith([alice, carol]);
  const server = await startWith([alice, carol, bob]);
  const previousRoot = new Group([alice.commitment, carol.commitment]).root.toString();
  assert.notEqual(
    (await new ContributorClient(server.url).request<{ root: string }>('GET', '/auth/semaphore/group')).root,
    previousRoot,
  );
  clock.advance(HOUR - 1_000);
  await signIn(new ContributorClient(server.url), await proofFor(carol, [alice, carol]));
  clock.advance(2_000);
  // A fresh challenge each time: the refusal is about the root alone.
  const late = await proofFor(carol, [alice, carol]);
  assert.equal(late.merkleTreeRoot, previousRoot);
  assert.deepEqual(await refusal(signIn(new ContributorClient(server.url), late)), {
    status: 401,
    code: 'auth.root_expired',
  });
});

test(
  'a member who signed out signs in again as the same contributor; a used challenge is still refused',
  { timeout: 120_000 },
  async () => {
    const server = await startWith([alice, carol, bob]);
    const first = new ContributorClient(server.url);
    const proof = await proofFor(carol, [alice, carol, bob]);
    const signedIn = await signIn(first, proof);
    await first.join();
    await first.request('POST', '/auth/logout');
    assert.deepEqual(await refusal(first.me()), { status: 401, code: 'auth.required' });

    const again = new ContributorClient(server.url);
    const second = await signIn(again, await proofFor(carol, [alice, carol, bob]));
    assert.equal(second.principal.id, signedIn.principal.id, 'same nullifier, same contributor');
    assert.notEqual(again.cookie, first.cookie, 'a new session');
    const me = await again.me();
    assert.notEqual(
      me.status.circuits[0]!.state,
      'pending',
      'the queue entry of the first session is still this contributor’s',
    );

    assert.deepEqual(await refusal(signIn(new ContributorClient(server.url), proof)), {
      status: 401,
      code: 'auth.challenge_unknown',
    });
  },
);
