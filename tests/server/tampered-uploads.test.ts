/**
 * The refusals that matter most, end to end over HTTP: a contribution whose structure is valid but
 * whose L section, H section or proof of knowledge was tampered with (each tamper keeps every point
 * on the curve, so the L/H/proof check itself is what refuses) is uploaded with the real tus client
 * to a real coordinator, verified by a separate `ceremony worker` process on a real Redis (the
 * proof of knowledge by the coordinator itself, before it hashes the key or queues a job), and
 * refused with its code. Afterwards the head (index and file hash), the transcript and the queue are
 * as before, except that the refused contributor is back at the end of the queue and told why. The
 * untampered contribution the three were made from is then accepted, so each refusal is the tamper's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { G1, recordOffset, sectionOffset, tamperedCopy } from '../helpers/zkey-tamper.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import type { WorkerProcess } from '../helpers/worker-process.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';

const TOKEN = 'coordinator-token-for-tamper-tests';
const CIRCUIT = 'register';
let worker: WorkerProcess;
let coordinator: TestCoordinator;
let dataDir: string;

before(async () => {
  coordinator = await startTestCoordinator({
    redis: true,
    worker: true,
    env: { COORDINATOR_TOKEN: TOKEN },
    tickIntervalMs: 100,
  });
  dataDir = coordinator.dataDir;
  worker = coordinator.worker!;
});

after(() => coordinator?.close());

interface CeremonyView {
  circuits: Array<{
    name: string;
    headIndex: number;
    headHash: string | null;
    headContributionHash: string | null;
    contributions: number;
  }>;
}
interface QueueView {
  entries: Array<{ circuit: string; contributorId: string; position: number }>;
  activeTurns: Array<{ circuit: string; contributorId: string; state: string }>;
}

/** What a refused upload must leave alone: the chain's head, the transcript, the zkeys on disk. */
async function chainSnapshot(client: ContributorClient) {
  const ceremony = await client.request<CeremonyView>('GET', '/api/ceremony');
  const { entries } = await client.request<{ entries: unknown[] }>('GET', '/api/transcript');
  const head = ceremony.circuits.find((c) => c.name === CIRCUIT)!;
  return {
    head: {
      index: head.headIndex,
      hash: head.headHash,
      contributionHash: head.headContributionHash,
      contributions: head.contributions,
    },
    transcript: entries,
  };
}

/** The register queue in order: who holds the turn, then who waits (ids). */
async function registerQueue(admin: ContributorClient): Promise<{ turn: string[]; waiting: string[] }> {
  const queue = await admin.request<QueueView>('GET', '/api/admin/queue');
  const waiting = queue.entries.filter((e) => e.circuit === CIRCUIT).sort((a, b) => a.position - b.position);
  assert.deepEqual(
    waiting.map((e) => e.position),
    waiting.map((_, i) => i + 1),
  );
  return {
    turn: queue.activeTurns.filter((t) => t.circuit === CIRCUIT).map((t) => `${t.contributorId}:${t.state}`),
    waiting: waiting.map((e) => e.contributorId),
  };
}

test(
  'tampered L, tampered H and a forged proof of knowledge are refused ' + 'over HTTP; head, transcript and queue stay',
  async () => {
    const admin = new ContributorClient(coordinator.url);
    await admin.signInCoordinator(TOKEN);
    const names = ['alice', 'bob', 'carol', 'dave'];
    const clients = new Map<string, ContributorClient>();
    for (const name of names) {
      const client = new ContributorClient(coordinator.url);
      await client.signInDemo(name);
      await client.join();
      clients.set((await client.me()).principal.id, client);
    }
    const ids = [...clients.keys()];
    const turnOf = (id: string) => `${id}:turn`;
    await clients
      .get(ids[0]!)!
      .waitFor((me) => me.status.circuits.find((c) => c.circuit === CIRCUIT)?.state === 'turn', 'the first turn');
    assert.deepEqual(await registerQueue(admin), { turn: [turnOf(ids[0]!)], waiting: ids.slice(1) });

    // One real contribution to head 0; the tampered copies are made from it.
    const { file: valid, contributionHash } = await clients.get(ids[0]!)!.makeContribution(CIRCUIT);
    // `byWorker`: refused by the worker process; a bad record is refused by the coordinator itself, before a job.
    const tampers: Array<{ what: string; code: string; file: string; byWorker: boolean }> = [
      {
        what: 'an L point replaced by another valid point',
        code: 'contribution.l_section_invalid',
        byWorker: true,
        file: await tamperedCopy(valid, `${valid}.bad-l`, (bytes, info) => {
          const l = sectionOffset(info, SECTION.l);
          bytes.copy(bytes, l, l + G1, l + 2 * G1);
        }),
      },
      {
        what: 'an H point replaced by another valid point',
        code: 'contribution.h_section_invalid',
        byWorker: true,
        file: await tamperedCopy(valid, `${valid}.bad-h`, (bytes, info) => {
          const h = sectionOffset(info, SECTION.h);
          bytes.copy(bytes, h + 3 * G1, h + 5 * G1, h + 6 * G1);
        }),
      },
      {
        what: 'a forged proof of knowledge (g1_sx := g1_s)',
        code: 'contribution.invalid_proof_of_knowledge',
        byWorker: false,
        file: await tamperedCopy(valid, `${valid}.bad-pok`, (bytes, info) => {
          const record = recordOffset(info, info.mpc.contributions.length - 1);
          bytes.copy(bytes, record + 2 * G1, record + G1, record + 2 * G1);
        }),
      },
    ];

    const initial = await chainSnapshot(admin);
    assert.equal(initial.head.index, 0);
    assert.ok(initial.head.hash, 'the head has a file hash');
    let order = [...ids];
    for (const tamper of tampers) {
      const holderId = order[0]!;
      const holder = clients.get(holderId)!;
      await holder.upload(CIRCUIT, tamper.file);

      // The worker process refuses it (never retried), and the contributor is told the code.
      if (tamper.byWorker)
        await worker.waitFor(
          new RegExp(
            `contribution \\S+ \\(job \\S+\\): attempt \\d+ of \\d+ failed, not ` +
              `retried: .*"code":"${tamper.code.replace('.', '\\.')}"`,
          ),
          120_000,
        );
      const me = await holder.waitFor(
        (m) => m.status.lastRefusal?.code === tamper.code,
        `the refusal of ${tamper.what}`,
        120_000,
      );
      assert.equal(me.status.lastRefusal?.circuit, CIRCUIT);
      assert.deepEqual(
        me.contributions.filter((c) => c.circuit === CIRCUIT).map((c) => [c.status, c.code]),
        [['refused', tamper.code]],
        tamper.what,
      );
      assert.ok(!JSON.stringify(me).includes(dataDir), 'no refusal names a server path');

      // The head did not move, the transcript is unchanged, nothing was written into the chain.
      assert.deepEqual(await chainSnapshot(admin), initial, tamper.what);
      assert.equal(existsSync(ceremonyPaths(dataDir).zkeyPath(CIRCUIT, 1)), false, tamper.what);

      // The queue is the one before, with the refused contributor moved from the turn to the end.
      order = [...order.slice(1), holderId];
      await clients
        .get(order[0]!)!
        .waitFor((m) => m.status.circuits.find((c) => c.circuit === CIRCUIT)?.state === 'turn', 'the next turn');
      assert.deepEqual(await registerQueue(admin), { turn: [turnOf(order[0]!)], waiting: order.slice(1) }, tamper.what);
      assert.equal((await holder.progress(CIRCUIT)).state, 'waiting');
    }

    // The contribution the tampers came from is valid: uploaded untouched, it becomes the head.
    const last = clients.get(order[0]!)!;
    await last.upload(CIRCUIT, valid);
    await last.waitFor(
      (m) => m.status.circuits.find((c) => c.circuit === CIRCUIT)?.state === 'accepted',
      'the untampered contribution accepted',
      120_000,
    );
    const accepted = await chainSnapshot(admin);
    assert.equal(accepted.head.index, 1);
    assert.equal(accepted.head.contributionHash, contributionHash);
    assert.notEqual(accepted.head.hash, initial.head.hash);
    assert.equal(accepted.transcript.length, initial.transcript.length + 1);
  },
);
