/**
 * The terminal client's Semaphore sign-in (cli/contributor/semaphore-sign-in.ts) against a
 * coordinator that checks one proof at a time (SEMAPHORE_MAX_PROOF_CHECKS=1) while another
 * contributor's check is held open: refused `503 auth.proof_checks_busy`, the client tells its user
 * once and sends the same proof again after the Retry-After, and signs in once the check is free,
 * without making a second proof. Real proofs, the real verifyProof. The rule's bounds and pace:
 * tests/core/proof-resend.test.ts.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { Group } from '@semaphore-protocol/group';
import { Identity } from '@semaphore-protocol/identity';
import { generateProof, verifyProof } from '@semaphore-protocol/proof';
import { CoordinatorClient } from '../../cli/contributor/coordinator-client.ts';
import { signInWithSemaphore } from '../../cli/contributor/semaphore-sign-in.ts';
import { Browser, startAuthTestServer, type AuthTestServer } from '../server/auth/auth-test-server.ts';

const artifactsDir = path.dirname(createRequire(import.meta.url).resolve('@zk-kit/semaphore-artifacts/package.json'));
const alice = new Identity('alice: holds the only proof check');
const bob = new Identity('bob: signs in from the terminal');
const group = new Group([alice.commitment, bob.commitment]);

let server: AuthTestServer;
// Alice's check waits here before the real verifyProof, so bob's proof arrives while it runs whatever
// the machine's speed; every later check is the real one at once.
let checks = 0;
let aliceCheckStarted!: () => void;
const aliceChecking = new Promise<void>((resolve) => (aliceCheckStarted = resolve));
let releaseAliceCheck!: () => void;
const aliceMayFinish = new Promise<void>((resolve) => (releaseAliceCheck = resolve));
const proofPosts: { at: number; body: string }[] = [];

before(async () => {
  server = await startAuthTestServer({
    config: { semaphore: { groupMembers: [alice, bob].map((m) => m.commitment.toString()), maxProofChecks: 1 } },
    extraDeps: {
      verifySemaphoreProof: async (proof) => {
        if (checks++ === 0) {
          aliceCheckStarted();
          await aliceMayFinish;
        }
        return verifyProof(proof as Parameters<typeof verifyProof>[0]);
      },
    },
  });
});

after(async () => {
  releaseAliceCheck();
  await server.close();
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
});

it('a proof refused for load is sent again, the same, and signs in once the check is free', async () => {
  // Alice takes the only check and holds it.
  const browser = new Browser();
  const issued = await browser.request(`${server.url}/auth/semaphore/challenge`, { method: 'POST' });
  const { challenge, scope } = (await issued.json()) as { challenge: string; scope: string };
  const aliceProof = await generateProof(alice, group, challenge, scope, undefined, {
    wasm: path.join(artifactsDir, 'semaphore-1.wasm'),
    zkey: path.join(artifactsDir, 'semaphore-1.zkey'),
  });
  const aliceAnswer = browser.post(`${server.url}/auth/semaphore`, { proof: aliceProof });
  await aliceChecking;

  const client = new CoordinatorClient(server.url);
  const send = client.request.bind(client);
  client.request = (method, route, ...rest) => {
    if (method === 'POST' && route === '/auth/semaphore')
      proofPosts.push({ at: Date.now(), body: JSON.stringify(rest[0]) });
    return send(method, route, ...rest);
  };
  const told: string[] = [];
  const signedIn = await signInWithSemaphore(client, bob.export(), (line) => {
    told.push(line);
    // Refused while alice's check runs: it may finish now, before the client's resend.
    if (/busy/.test(line)) releaseAliceCheck();
  });

  assert.equal((await aliceAnswer).status, 200, "alice's held check signed her in");
  assert.equal(told.filter((line) => /busy/.test(line)).length, 1, told.join('\n'));
  assert.equal(told.filter((line) => /proving/.test(line)).length, 1, 'one proof made, not a second');
  assert.equal(proofPosts.length, 2, 'refused once, then signed in');
  assert.equal(proofPosts[1]!.body, proofPosts[0]!.body, 'the same proof sent again');
  const { proof } = JSON.parse(proofPosts[0]!.body) as { proof: { nullifier: string } };
  assert.equal(signedIn.principal.id, `semaphore:${proof.nullifier}`, 'bob signed in by that proof');
  const waited = proofPosts[1]!.at - proofPosts[0]!.at;
  assert.ok(waited >= 1000 && waited < 15_000, `resent after the 1 s Retry-After (${waited} ms)`);
  assert.equal(checks, 2, 'the refused sending ran no check; the resent one did');
  // The session works: the cookie and CSRF token of the resent sign-in's answer.
  assert.equal(
    (await client.request<{ principal: { id: string } }>('GET', '/api/me')).principal.id,
    signedIn.principal.id,
  );
});
