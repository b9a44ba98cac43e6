/**
 * The coordinator end to end over HTTP, with verification on a real Redis by a separate
 * `ceremony worker` process: two contributors go through every circuit while a third waits
 * and watches its position move; a bad zkey is refused with its code while the head stays;
 * out-of-turn, wrong-circuit and unauthenticated uploads and a coordinator action without
 * rights are refused. At the end the transcript, receipts and an audit of the folder agree.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import { sectionOffset, tamperedCopy } from '../helpers/zkey-tamper.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { readCachedCombination } from '../../core/link-check/link-combination-cache.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { auditorConfigOf, devPtauHash, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';

let coordinator: TestCoordinator;
let dataDir: string;
// Two circuits: going through every circuit in turn, a queue per circuit and the audit of the whole
// folder are shown by two as by nine, for two ninths of the contributions, verifications and audit.
const CIRCUITS = TWO_CIRCUITS;

async function expectRefused(promise: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    const text = String((error as Error).message ?? error);
    if (error instanceof HttpError) {
      assert.equal(error.status, status, text);
      assert.equal(error.code, code, text);
    } else {
      // tus-js-client reports the response status and body in its message
      assert.match(text, new RegExp(`response code: ${status}`), text);
      assert.match(text, new RegExp(code.replace('.', '\\.')), text);
    }
    return true;
  });
}

before(async () => {
  // The worker logs every job, failed attempt and stall on stderr (all of it is echoed); with the
  // coordinator's warnings, a verdict of verification.unavailable comes with its cause in the output.
  coordinator = await startTestCoordinator({
    redis: true,
    worker: { echo: 'all' },
    env: { COORDINATOR_TOKEN: 'coordinator-token-for-tests' },
    tickIntervalMs: 100,
    ceremony: { circuits: CIRCUITS },
  });
  dataDir = coordinator.dataDir;
});

after(() => coordinator?.close());

test("the worker caches every circuit's contribution 0 combination once the coordinator starts", async () => {
  const state = await openCeremony(dataDir);
  const stateDir = stateDirFor(dataDir);
  const seed = await linkChallengeSeed(stateDir);
  const cached = async () => {
    const found = await Promise.all(
      [...state.chains].map(([circuit, chain]) =>
        readCachedCombination(stateDir, circuitChallengeKey(seed, circuit), chain.init!.fileHash),
      ),
    );
    return found.every(Boolean);
  };
  await waitUntil(cached, "every circuit's cached combination of contribution 0");
  assert.equal(state.chains.size, CIRCUITS.length);
});

describe('two contributors through every circuit, a third waiting', () => {
  const alice = () => new ContributorClient(coordinator.url);
  let a: ContributorClient;
  let b: ContributorClient;
  let c: ContributorClient;

  test('sign in and join in order: FIFO positions on the first circuit', async () => {
    a = alice();
    b = new ContributorClient(coordinator.url);
    c = new ContributorClient(coordinator.url);
    await a.signInDemo('alice');
    await b.signInDemo('bob');
    await c.signInDemo('carol');
    await a.join();
    await b.join();
    assert.equal((await a.progress('register')).state, 'turn');
    assert.equal((await b.progress('register')).position, 1);
    assert.ok(((await b.progress('register')).etaMs ?? 0) > 0);
    assert.equal((await c.progress('register')).state, 'pending', 'not joined yet');
  });

  test('refusals: unauthenticated, out of turn, another circuit, coordinator action without rights', async () => {
    const anonymous = new ContributorClient(coordinator.url);
    const { file } = await a.makeContribution('register');
    await expectRefused(anonymous.upload('register', file), 401, 'auth.required');
    await expectRefused(b.upload('register', file), 409, 'lobby.not_your_turn');
    await expectRefused(a.upload(CIRCUITS[1]!, file), 409, 'lobby.not_your_turn');
    // Larger than the head plus room for one record: refused before a byte is stored.
    const headSize = (await stat(ceremonyPaths(dataDir).zkeyPath('register', 0))).size;
    await expectRefused(a.upload('register', Buffer.alloc(headSize + 128 * 1024)), 413, 'upload.too_large');
    await expectRefused(a.request('POST', '/api/admin/phase', { phase: 'paused' }), 403, 'auth.not_coordinator');
    await expectRefused(anonymous.request('GET', '/api/me'), 401, 'auth.required');
  });

  test('a bad zkey is refused with its code, the head stays, and the contributor may try again', async () => {
    // A real contribution with one byte of its IC section changed: a contribution may not touch IC.
    const { file } = await a.makeContribution('register');
    const bad = await tamperedCopy(file, `${file}.bad`, (bytes, info) => {
      const at = sectionOffset(info, SECTION.ic) + 5;
      bytes[at] = bytes[at]! ^ 1;
    });
    await a.upload('register', bad);
    const me = await a.waitFor((m) => m.status.lastRefusal !== undefined, 'the refusal');
    assert.equal(me.status.lastRefusal?.code, 'contribution.header_mismatch');
    assert.equal(await a.headIndex('register'), 0);
    const refused = me.contributions.find((x) => x.status === 'refused');
    assert.equal(refused?.code, 'contribution.header_mismatch');
    assert.ok(!JSON.stringify(me).includes(dataDir), 'no refusal names a server path');
  });

  test('both contribute to every circuit; the third sees its position move', async () => {
    // alice was refused on register and went to the back of its queue, behind bob; carol joins last.
    await c.join();
    assert.equal((await c.progress('register')).position, 2);
    const positions: number[] = [];
    let watching = true;
    let beatAt = 0;
    const watcher = (async () => {
      while (watching) {
        const p = await c.progress('register');
        if (p.state === 'waiting' && positions.at(-1) !== p.position) positions.push(p.position!);
        // Her turn comes while the others go on: her client takes it (a turn left untaken is a
        // missed turn, and a second one would send her to the back after the cooldown) and beats.
        if (p.state === 'turn' && Date.now() - beatAt > 10_000) {
          await c.request('POST', '/api/circuits/register/heartbeat');
          beatAt = Date.now();
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const run = async (who: ContributorClient) => {
      for (const circuit of CIRCUITS) await who.takeTurn(circuit);
    };
    await Promise.all([run(a), run(b)]);
    watching = false;
    await watcher;
    for (const who of [a, b]) assert.equal((await who.me()).status.done, true);
    const ceremony = await a.request<{ circuits: Array<{ name: string; contributions: number; queueLength: number }> }>(
      'GET',
      '/api/ceremony',
    );
    for (const circuit of ceremony.circuits) assert.equal(circuit.contributions, 2, circuit.name);
    await c.waitFor((m) => m.status.circuits[0]!.state === 'turn', "carol's turn");
    assert.deepEqual(positions, [2, 1]);
  });

  test('signed receipts verify against the published key; the transcript and an audit agree', async () => {
    const { receiptPublicKey } = await a.request<{ receiptPublicKey: string }>('GET', '/api/ceremony');
    const { receipts } = await a.request<{ receipts: Array<{ body: string; signature: string }> }>(
      'GET',
      '/api/me/receipts',
    );
    assert.equal(receipts.length, CIRCUITS.length);
    for (const receipt of receipts) {
      assert.equal(verifyReceipt(receipt, receiptPublicKey), true);
      assert.equal(
        verifyReceipt({ ...receipt, body: receipt.body.replace('alice', 'mallory') }, receiptPublicKey),
        false,
      );
    }
    const { entries } = await a.request<{ entries: Array<{ type: string; contributor?: string }> }>(
      'GET',
      '/api/transcript',
    );
    assert.equal(entries.filter((e) => e.type === 'contribution').length, 2 * CIRCUITS.length);
    const report = await auditCeremony(dataDir, undefined, {
      auditorConfig: auditorConfigOf(dataDir),
      ptauHash: await devPtauHash(),
      inProgress: true,
    });
    assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
  });

  test('zkeys download by index with HTTP range requests; the manifest is 404 until finalised', async () => {
    const whole = Buffer.from(await (await fetch(`${coordinator.url}/api/circuits/register/zkeys/2`)).arrayBuffer());
    const ranged = await fetch(`${coordinator.url}/api/circuits/register/zkeys/2`, {
      headers: { range: 'bytes=4-11' },
    });
    assert.equal(ranged.status, 206);
    assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), whole.subarray(4, 12));
    await expectRefused(a.request('GET', '/api/circuits/register/zkeys/3'), 404, 'not_found');
    await expectRefused(a.request('GET', '/api/manifest'), 404, 'manifest.not_finalised');
  });
});
