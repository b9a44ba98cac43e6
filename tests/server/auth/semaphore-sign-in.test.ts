// Semaphore sign-in with real proofs from the official artifacts, checked by the real verifyProof.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Group } from '@semaphore-protocol/group';
import { Identity } from '@semaphore-protocol/identity';
import { generateProof, verifyProof } from '@semaphore-protocol/proof';
import { ManualClock } from '../../../server/clock.ts';
import { openDatabase } from '../../../server/store/database.ts';
import { SemaphoreGroup } from '../../../server/auth/semaphore-group.ts';
import { encodeSemaphoreScope } from '../../../server/auth/semaphore-scope.ts';
import type { SemaphoreProofJson } from '../../../server/auth/semaphore-sign-in.ts';
import { assertRefused, Browser, startAuthTestServer, type AuthTestServer } from './auth-test-server.ts';

const SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const CEREMONY_ID = 'test-ceremony';
const artifactsDir = path.dirname(createRequire(import.meta.url).resolve('@zk-kit/semaphore-artifacts/package.json'));
// Two members: a depth-1 tree, the smallest official artifacts (fast proofs).
const artifacts = {
  wasm: path.join(artifactsDir, 'semaphore-1.wasm'),
  zkey: path.join(artifactsDir, 'semaphore-1.zkey'),
};

const alice = new Identity('alice: test identity for the auth suite');
const bob = new Identity('bob: test identity for the auth suite');
const outsider = new Identity('mallory: not in the ceremony group');
const group = new Group([alice.commitment, bob.commitment]);

type Proof = SemaphoreProofJson;

describe('Semaphore sign-in', () => {
  const clock = new ManualClock();
  let server: AuthTestServer;

  before(async () => {
    server = await startAuthTestServer({
      clock,
      ceremonyId: CEREMONY_ID,
      config: { semaphore: { groupMembers: [alice.commitment.toString(), bob.commitment.toString()] } },
    });
  });

  after(async () => {
    await server.close();
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  async function challenge(browser: Browser) {
    const response = await browser.request(`${server.url}/auth/semaphore/challenge`, { method: 'POST' });
    assert.equal(response.status, 200);
    return (await response.json()) as { challenge: string; scope: string; expiresAt: string; groupRoot: string };
  }

  /** A fresh challenge in `browser`, and `identity`'s proof for it in `proofGroup`, under its scope. */
  async function provenChallenge(browser: Browser, identity: Identity, proofGroup = group) {
    const { challenge: message, scope } = await challenge(browser);
    return generateProof(identity, proofGroup, message, scope, undefined, artifacts);
  }

  async function submit(browser: Browser, proof: unknown) {
    return browser.post(`${server.url}/auth/semaphore`, { proof });
  }

  let aliceProof: Proof;

  it('issues a one-time challenge usable as the proof message, with the scope and root', async () => {
    const issued = await challenge(new Browser());
    assert.match(issued.challenge, /^[1-9][0-9]*$/);
    assert.ok(BigInt(issued.challenge) < SNARK_SCALAR_FIELD);
    assert.equal(issued.scope, encodeSemaphoreScope(CEREMONY_ID));
    assert.equal(issued.groupRoot, group.root.toString());
    assert.equal(Date.parse(issued.expiresAt), clock.now() + 5 * 60_000);
    const members = (await (await new Browser().request(`${server.url}/auth/semaphore/group`)).json()) as {
      members: string[];
      root: string;
    };
    assert.deepEqual(members.members, [alice.commitment.toString(), bob.commitment.toString()]);
  });

  it('signs in a valid proof as semaphore:<nullifier>', async () => {
    const browser = new Browser();
    const { challenge: message } = await challenge(browser);
    // The ceremony id as a plain string: the server must encode it the way the library does.
    aliceProof = await generateProof(alice, group, message, CEREMONY_ID, undefined, artifacts);
    assert.equal(aliceProof.scope, encodeSemaphoreScope(CEREMONY_ID));
    const response = await submit(browser, aliceProof);
    assert.equal(response.status, 200);
    const body = (await response.json()) as {
      principal: { id: string; displayName: string; coordinator: boolean };
      csrfToken: string;
    };
    assert.deepEqual(body.principal, {
      id: `semaphore:${aliceProof.nullifier}`,
      kind: 'semaphore',
      displayName: 'anonymous',
      coordinator: false,
    });
    const me = (await (await browser.request(`${server.url}/api/me`)).json()) as { principal: { id: string } };
    assert.equal(me.principal.id, `semaphore:${aliceProof.nullifier}`);
  });

  it('refuses a replayed challenge', async () => {
    const response = await submit(new Browser(), aliceProof);
    await assertRefused(response, 401, 'auth.challenge_unknown');
  });

  it('signs the same identity in again as the same contributor, with a new session (fresh challenge)', async () => {
    const browser = new Browser();
    const proof = await provenChallenge(browser, alice);
    assert.equal(proof.nullifier, aliceProof.nullifier);
    const response = await submit(browser, proof);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { principal: { id: string } };
    assert.equal(body.principal.id, `semaphore:${aliceProof.nullifier}`);
    assert.ok(browser.cookies.get('ceremony_session'), 'a session cookie of its own');
  });

  it('refuses a forged proof (one proof point tampered)', async () => {
    const browser = new Browser();
    const proof = await provenChallenge(browser, bob);
    const forged = {
      ...proof,
      points: proof.points.map((p: string, i: number) => (i === 0 ? (BigInt(p) + 1n).toString() : p)),
    };
    const response = await submit(browser, forged);
    await assertRefused(response, 401, 'auth.invalid_proof');
  });

  it('refuses a malformed proof body', async () => {
    const response = await submit(new Browser(), { ...aliceProof, points: ['1', '2'] });
    await assertRefused(response, 400, 'request.invalid');
  });

  it('refuses an expired challenge', async () => {
    const browser = new Browser();
    const proof = await provenChallenge(browser, bob);
    clock.advance(5 * 60_000 + 1);
    const response = await submit(browser, proof);
    await assertRefused(response, 401, 'auth.challenge_unknown');
  });

  it('refuses a proof scoped to another ceremony', async () => {
    const browser = new Browser();
    const { challenge: message } = await challenge(browser);
    const proof = await generateProof(bob, group, message, 'other-ceremony', undefined, artifacts);
    const response = await submit(browser, proof);
    await assertRefused(response, 401, 'auth.wrong_scope');
  });

  it('refuses a proof against a group root that is not configured', async () => {
    const browser = new Browser();
    const proof = await provenChallenge(browser, outsider, new Group([outsider.commitment, bob.commitment]));
    const response = await submit(browser, proof);
    await assertRefused(response, 401, 'auth.unknown_root');
  });
});

describe('Semaphore proof checks at once (SEMAPHORE_MAX_PROOF_CHECKS)', () => {
  const clock = new ManualClock();
  let server: AuthTestServer;
  // The first check waits here before the real verifyProof, so a second proof arrives while it runs, whatever the
  // machine's speed; every later check is the real one at once.
  let checkStarted!: () => void;
  const firstCheckStarted = new Promise<void>((resolve) => (checkStarted = resolve));
  let letFirstCheckRun!: () => void;
  const firstCheckMayRun = new Promise<void>((resolve) => (letFirstCheckRun = resolve));
  let checks = 0;

  before(async () => {
    server = await startAuthTestServer({
      clock,
      ceremonyId: CEREMONY_ID,
      config: {
        semaphore: { groupMembers: [alice.commitment.toString(), bob.commitment.toString()], maxProofChecks: 1 },
      },
      extraDeps: {
        verifySemaphoreProof: async (proof) => {
          if (checks++ === 0) {
            checkStarted();
            await firstCheckMayRun;
          }
          return verifyProof(proof as Parameters<typeof verifyProof>[0]);
        },
      },
    });
  });

  after(async () => {
    letFirstCheckRun();
    await server.close();
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  async function proofIn(browser: Browser, identity: Identity): Promise<Proof> {
    const response = await browser.request(`${server.url}/auth/semaphore/challenge`, { method: 'POST' });
    const { challenge: message, scope } = (await response.json()) as { challenge: string; scope: string };
    return generateProof(identity, group, message, scope, undefined, artifacts);
  }

  it(
    'with a cap of 1, a second proof sent during a check is 503 auth.proof_checks_busy with Retry-After; the ' +
      'same proof then signs in, and a refused proof frees its slot',
    async () => {
      const [first, second] = [new Browser(), new Browser()];
      const [aliceProof, bobProof] = [await proofIn(first, alice), await proofIn(second, bob)];

      const firstAnswer = first.post(`${server.url}/auth/semaphore`, { proof: aliceProof });
      await Promise.race([
        firstCheckStarted,
        firstAnswer.then(() => assert.fail('the first proof was answered without the held check')),
      ]);
      const busy = await second.post(`${server.url}/auth/semaphore`, { proof: bobProof });
      assert.equal(busy.headers.get('retry-after'), '1');
      await assertRefused(busy, 503, 'auth.proof_checks_busy');

      letFirstCheckRun();
      assert.equal((await firstAnswer).status, 200, 'the proof being checked signs in');
      // Its slot is free again, and the refused proof's challenge was not spent: the same proof signs bob in.
      const retried = await second.post(`${server.url}/auth/semaphore`, { proof: bobProof });
      assert.equal(retried.status, 200);
      const body = (await retried.json()) as { principal: { id: string } };
      assert.equal(body.principal.id, `semaphore:${bobProof.nullifier}`);
      assert.equal(checks, 2, 'the refused sign-in ran no check');

      // A refused proof (a forged point, then its spent challenge) frees its slot: the next one is checked.
      const proof = await proofIn(first, alice);
      const forged = { ...proof, points: proof.points.map((p, i) => (i === 0 ? (BigInt(p) + 1n).toString() : p)) };
      await assertRefused(
        await first.post(`${server.url}/auth/semaphore`, { proof: forged }),
        401,
        'auth.invalid_proof',
      );
      await assertRefused(await first.post(`${server.url}/auth/semaphore`, { proof }), 401, 'auth.challenge_unknown');
      assert.equal(
        (await first.post(`${server.url}/auth/semaphore`, { proof: await proofIn(first, alice) })).status,
        200,
      );
      assert.equal(checks, 4, 'the forged proof and the last were checked');
    },
  );
});

describe('Semaphore group root window', () => {
  it('accepts the current root and the rootWindow before it, across a restart', () => {
    const db = openDatabase(':memory:');
    const clock = new ManualClock();
    const members = ['1', '2'];
    const options = { rootWindow: 2, rootDurationMs: 60 * 60_000 };
    const semaphoreGroup = new SemaphoreGroup(db, clock, members, options);
    const roots = [semaphoreGroup.root];
    for (const added of ['3', '4', '5']) {
      members.push(added);
      semaphoreGroup.updateGroupMembers(members);
      roots.push(semaphoreGroup.root);
    }
    assert.equal(semaphoreGroup.root, new Group(members.map(BigInt)).root.toString());
    assert.deepEqual(
      roots.map((r) => semaphoreGroup.isAcceptedRoot(r)),
      [false, true, true, true],
    );
    const restarted = new SemaphoreGroup(db, clock, members, options);
    assert.deepEqual(
      roots.map((r) => restarted.isAcceptedRoot(r)),
      [false, true, true, true],
    );
    assert.equal(restarted.isAcceptedRoot('12345'), false);
    assert.equal(restarted.rootStatus(roots[0]!), 'expired');
    assert.equal(restarted.rootStatus('12345'), 'unknown');
    // The grace period runs from when each root was replaced.
    clock.advance(60 * 60_000 + 1);
    assert.deepEqual(
      roots.map((r) => restarted.isAcceptedRoot(r)),
      [false, false, false, true],
    );
    db.close();
  });

  it('revokes every earlier root when a member is removed, also when the removal comes with a restart', () => {
    const db = openDatabase(':memory:');
    const clock = new ManualClock();
    const options = { rootWindow: 3, rootDurationMs: 60 * 60_000 };
    const semaphoreGroup = new SemaphoreGroup(db, clock, ['1', '2'], options);
    const first = semaphoreGroup.root;
    semaphoreGroup.updateGroupMembers(['1', '2', '3']);
    const second = semaphoreGroup.root;
    assert.equal(semaphoreGroup.isAcceptedRoot(first), true, 'an addition keeps the window');
    const restarted = new SemaphoreGroup(db, clock, ['1', '3'], options);
    assert.deepEqual(
      [first, second].map((r) => restarted.rootStatus(r)),
      ['expired', 'expired'],
    );
    assert.equal(restarted.isAcceptedRoot(restarted.root), true);
    db.close();
  });

  it('encodes scopes exactly as the proof library does', () => {
    assert.equal(encodeSemaphoreScope('2024'), '2024');
    assert.equal(encodeSemaphoreScope('0x10'), '16');
    assert.equal(BigInt(encodeSemaphoreScope('a')), 0x61n << 248n);
    assert.throws(() => encodeSemaphoreScope('x'.repeat(32)), /31 bytes/);
  });
});
