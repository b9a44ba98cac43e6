/**
 * The contribution delta (zkey-delta-v2, v1 still taken) over real HTTP against a real
 * coordinator: a contributor downloads the head's inputs (its skeleton), contributes on them and
 * uploads only the skeleton of the next key with tus (`format: zkey-delta-v2`, the record before L
 * and H); the coordinator fills it back into the full key and verifies it. With the same secret,
 * the key that lands is byte for byte the key the same contribution makes on the whole head.
 * Deltas that are not one contribution on top of the head are refused with their codes (a creation
 * that cannot be one, keeping the turn; a delta whose layout or record is not one, as a verdict no
 * verifier is asked for; or by the verifier), and the head, the transcript and the chain's files
 * stay as they were: a garbage record is refused before a point is summed, and a point off the
 * curve or a point at infinity out of place before the delta is handed in (no second pass by the
 * verifier).
 * A delta whose turn ends while it is taken in leaves neither its key nor the sums made for its
 * verifier.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { recordedCoordinator } from '../helpers/recorded-coordinator.ts';
import { editSections, G1, inDeltaV2Order, sectionOf } from '../helpers/zkey-tamper.ts';
import { kernelDelta } from '../helpers/kernel-delta.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { DELTA_FORMAT, DELTA_FORMAT_V1 } from '../../core/delta/delta-format.ts';
import { tempPathFor } from '../../core/fs/atomic-write.ts';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';

const CIRCUIT = 'register';
/** The coordinator the tests take turns on, and their scratch folder. */
// Each refusal is a missed turn: the contributors here are refused many times in a row, on purpose.
const fixture = recordedCoordinator('contribution-delta-', { MAX_MISSED_TURNS: '1000' });
/** The coordinator's log lines (warnings also go to stderr). */
const logged = fixture.logged;
/** The first delta accepted (made on head 0): later uploaded again as a delta on an older head. */
let firstDelta: Buffer;

/**
 * A kernel contribution whose "fresh" randomness is a fixed byte pattern: snarkjs mixes the typed
 * entropy with randomFillSync's bytes, so two contributions made here share one secret.
 */
async function contributeWithFixedSecret(input: string, output: string, name: string): Promise<void> {
  const original = crypto.randomFillSync;
  crypto.randomFillSync = (<T extends NodeJS.ArrayBufferView>(buffer: T): T => {
    new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength).fill(0x5a);
    return buffer;
  }) as typeof crypto.randomFillSync;
  try {
    await contributeFast(input, output, name, 'the same typed entropy', { workers: 2 });
  } finally {
    crypto.randomFillSync = original;
  }
}

/**
 * A hostile delta: `delta` with the head's own L and H (from the inputs `headInputs`) and its new
 * record's transcript digest changed, so its proof of knowledge fails. Before the record came
 * first, taking it in cost the coordinator a pass over L and H (sums, a key written) first.
 */
function garbageRecord(delta: Buffer, headInputs: Buffer): Buffer {
  const head = (id: number): Buffer => {
    let data = Buffer.alloc(0);
    editSections(headInputs, (f) => (data = Buffer.from(sectionOf(f, id).data)));
    return data;
  };
  const headHistoryBytes = head(SECTION.mpc).length;
  return editSections(delta, (f) => {
    sectionOf(f, SECTION.l).data = head(SECTION.l);
    sectionOf(f, SECTION.h).data = head(SECTION.h);
    // The new record follows the head's history: δ, g1_s, g1_sx (G1), g2_spx (G2), then its transcript.
    sectionOf(f, SECTION.mpc).data[headHistoryBytes + 3 * G1 + 2 * G1 + 5]! ^= 0xff;
  });
}

async function signedInAndJoined(name: string): Promise<ContributorClient> {
  const client = new ContributorClient(fixture.coordinator.url);
  await client.signInDemo(name);
  await client.join();
  return client;
}

const turnOn = (client: ContributorClient): Promise<unknown> => client.waitForState(CIRCUIT, 'turn', 'a turn');

/** `name` signed in, joined and on turn, with the head's inputs downloaded to the scratch folder. */
async function onTurnWithInputs(name: string): Promise<{ client: ContributorClient; inputs: string; head: number }> {
  const client = await signedInAndJoined(name);
  await turnOn(client);
  const inputs = path.join(fixture.scratch, `head-${name}.skeleton`);
  const { head } = await client.downloadInputs(CIRCUIT, inputs);
  return { client, inputs, head };
}

/** A kernel contribution on the inputs at `inputs`, as the streaming clients send it (v2). */
const contributeDelta = (inputs: string, name: string): Promise<Buffer> =>
  kernelDelta(inputs, path.join(fixture.scratch, `${name}-v1.skeleton`), name);

/** What no refused delta may change: the head, the transcript, the chain's files, the uploads left. */
async function chainState(client: ContributorClient) {
  const ceremony = await client.request<{ circuits: Array<{ name: string; headIndex: number; headHash: string }> }>(
    'GET',
    '/api/ceremony',
  );
  const head = ceremony.circuits.find((c) => c.name === CIRCUIT)!;
  const { entries } = await client.request<{ entries: unknown[] }>('GET', '/api/transcript');
  const chainFiles = (await readdir(ceremonyPaths(fixture.coordinator.dataDir).chainDir(CIRCUIT))).sort();
  return { head: [head.headIndex, head.headHash], transcript: entries, chainFiles };
}

async function uploadsLeft(): Promise<string[]> {
  return readdir(path.join(fixture.coordinator.dataDir, 'uploads', CIRCUIT)).catch(() => []);
}

/** How the last delta was spliced: as it arrived (with the link check's sums made meanwhile) or whole at the end. */
function lastSplice(): { asItArrived: boolean; sums: boolean } {
  const line = lastSpliceLine();
  return { asItArrived: line.fields?.asItArrived === true, sums: line.fields?.sums === true };
}

function lastSpliceLine(): (typeof logged)[number] {
  const line = logged.filter((l) => l.message === 'contribution delta spliced onto the head').at(-1);
  assert.ok(line, 'the coordinator logged no splice');
  return line;
}

/** The uploads whose candidate rows still hold link sums (a row goes with its verdict or its upload). */
function sumsLeft(): string[] {
  const rows = fixture.coordinator.db.prepare('SELECT upload_path FROM candidates WHERE sums IS NOT NULL').all();
  return (rows as Array<{ upload_path: string }>).map((row) => row.upload_path);
}

/** The sums on the candidate row of the upload at `file`, sealed as its verification request carries them. */
function sumsOnRow(file: string): Buffer | null | undefined {
  const row = fixture.coordinator.db.prepare('SELECT sums FROM candidates WHERE upload_path = ?').get(file);
  return (row as { sums: Buffer | null } | undefined)?.sums;
}

test("a delta on the head's inputs becomes byte for byte the key the same secret makes on the whole head", async () => {
  const alice = await signedInAndJoined('alice');
  await turnOn(alice);
  const ceremony = await alice.request<{ contributionFormats: string[] }>('GET', '/api/ceremony');
  assert.deepEqual(ceremony.contributionFormats, ['zkey', DELTA_FORMAT, DELTA_FORMAT_V1]);

  const inputs = path.join(fixture.scratch, 'head0.skeleton');
  const downloaded = await alice.downloadInputs(CIRCUIT, inputs);
  const headKey = ceremonyPaths(fixture.coordinator.dataDir).zkeyPath(CIRCUIT, 0);
  const headBytes = (await readFile(headKey)).length;
  assert.deepEqual({ head: downloaded.head, format: downloaded.format }, { head: 0, format: DELTA_FORMAT });
  assert.ok(
    downloaded.bytes < headBytes,
    `the inputs (${downloaded.bytes} B) are smaller than the key (${headBytes} B)`,
  );

  const delta = path.join(fixture.scratch, 'delta0.skeleton');
  const whole = path.join(fixture.scratch, 'whole1.zkey');
  await contributeWithFixedSecret(inputs, delta, 'alice');
  await contributeWithFixedSecret(headKey, whole, 'alice');
  firstDelta = inDeltaV2Order(await readFile(delta));

  const answer = await alice.sendUpload(CIRCUIT, firstDelta, { format: DELTA_FORMAT, head: '0' });
  assert.equal(answer.status, 204, JSON.stringify(answer));
  assert.ok(answer.contributionId);
  await alice.waitForState(CIRCUIT, 'accepted', 'the delta accepted', 120_000);
  const landed = Buffer.from(
    await (await fetch(`${fixture.coordinator.url}/api/circuits/${CIRCUIT}/zkeys/1`)).arrayBuffer(),
  );
  assert.ok(landed.equals(await readFile(whole)), 'the spliced key is not the whole-key contribution');
  // Taken in as it arrived: spliced, hashed and summed before the last byte; the verifier used the sums.
  assert.deepEqual(lastSplice(), { asItArrived: true, sums: true });
  assert.deepEqual(await uploadsLeft(), [], 'no upload is left behind');
  assert.deepEqual(sumsLeft(), [], 'the sums went with the candidate row at the verdict');
});

test(
  'deltas that are not one contribution on top of the head are refused with their codes; ' +
    'head, transcript and files stay',
  async () => {
    const { client: bob, inputs, head } = await onTurnWithInputs('bob');
    assert.equal(head, 1);
    const valid = await contributeDelta(inputs, 'bob');
    const before = await chainState(bob);

    const asDelta = { format: DELTA_FORMAT, head: '1' };
    // Refused at creation, before a byte is stored: a request refused, not an upload; the turn is kept.
    const refusedAtCreation: Array<{ what: string; bytes: Buffer; metadata: Record<string, string>; expect: RegExp }> =
      [
        {
          what: 'a truncated section (H one point shorter: shorter than any next link)',
          bytes: editSections(valid, (f) => {
            const h = sectionOf(f, SECTION.h);
            h.data = h.data.subarray(G1);
          }),
          metadata: asDelta,
          expect: /^400 upload\.too_small .*the head's skeleton plus one contribution record/,
        },
        {
          what: 'a delta made on an older head (the one accepted on head 0)',
          bytes: firstDelta,
          metadata: { format: DELTA_FORMAT, head: '0' },
          expect: /^409 delta\.stale_head .*made on contribution 0, but the head of register is now contribution 1/,
        },
        {
          what: 'a delta that does not say which head it was made on',
          bytes: valid,
          metadata: { format: DELTA_FORMAT },
          expect: /^400 request\.invalid .*declares the index of the head/,
        },
        {
          what: 'an unknown format',
          bytes: valid,
          metadata: { format: 'zkey-delta-v0', head: '1' },
          expect: /^400 request\.invalid .*unknown upload format/,
        },
      ];
    for (const refused of refusedAtCreation) {
      const answer = await bob.sendUpload(CIRCUIT, refused.bytes, refused.metadata);
      assert.match(`${answer.status} ${answer.code} ${answer.message}`, refused.expect, refused.what);
      assert.deepEqual(await chainState(bob), before, refused.what);
      assert.deepEqual(await uploadsLeft(), [], `${refused.what}: no upload is left behind`);
    }
    assert.equal((await bob.progress(CIRCUIT)).state, 'turn', 'a refused creation keeps the turn');

    // An upload that is not a contribution on the head is a verdict, as the verifier's refusal would be: the turn
    // ends, the contributor sees why, and no verifier is asked (its layout or record refused before any point).
    const refusedAsVerdicts: Array<{ what: string; bytes: Buffer; metadata?: Record<string, string>; expect: RegExp }> =
      [
        {
          what: 'a padded section (H one point longer)',
          bytes: editSections(valid, (f) => {
            const h = sectionOf(f, SECTION.h);
            h.data = Buffer.concat([h.data, h.data.subarray(0, G1)]);
          }),
          // Found at the history's header, before any point: its sections cannot fill the length it declared.
          expect: /^delta\.malformed .*its sections add up to \d+ bytes, the upload declares \d+/,
        },
        {
          what: 'sections out of order',
          bytes: editSections(valid, (f) => f.sections.reverse()),
          expect: /^delta\.malformed .*in the order of zkey-delta-v2/,
        },
        {
          what: 'a v1 delta declared as v2 (the record after H)',
          bytes: editSections(valid, (f) => f.sections.sort((a, b) => a.id - b.id)),
          expect: /^delta\.malformed .*in the order of zkey-delta-v2/,
        },
        {
          what: 'the head’s own L and H with a garbage record (its transcript digest)',
          bytes: garbageRecord(valid, inDeltaV2Order(await readFile(inputs))),
          expect: /^contribution\.invalid_proof_of_knowledge .*transcript digest/,
        },
        {
          what: 'the same in v1’s order, checked once complete',
          bytes: editSections(garbageRecord(valid, inDeltaV2Order(await readFile(inputs))), (f) =>
            f.sections.sort((a, b) => a.id - b.id),
          ),
          metadata: { format: DELTA_FORMAT_V1, head: '1' },
          expect: /^contribution\.invalid_proof_of_knowledge .*transcript digest/,
        },
      ];
    const count = (message: string): number => logged.filter((l) => l.message === message).length;
    for (const refused of refusedAsVerdicts) {
      await turnOn(bob);
      const verifications = count('contribution uploaded, verifying');
      const sent = await bob.sendUpload(CIRCUIT, refused.bytes, refused.metadata ?? asDelta);
      assert.equal(sent.status, 204, `${refused.what}: handed in with its refusal (${JSON.stringify(sent)})`);
      const me = await bob.waitFor(
        (m) => m.contributions.some((c) => c.id === sent.contributionId && c.status !== 'verifying'),
        `the verdict on ${refused.what}`,
        120_000,
      );
      const verdict = me.contributions.find((c) => c.id === sent.contributionId)!;
      assert.equal(verdict.status, 'refused', `${refused.what}: a refusal, never an error`);
      assert.match(`${verdict.code} ${verdict.message}`, refused.expect, refused.what);
      assert.equal(count('contribution uploaded, verifying'), verifications, `${refused.what}: no verifier asked`);
      assert.deepEqual(await chainState(bob), before, refused.what);
      assert.deepEqual(await uploadsLeft(), [], `${refused.what}: no upload is left behind`);
    }
    await turnOn(bob);

    // An L point replaced by another valid point fits the head: spliced, handed in, refused by the verifier.
    const tamperedL = editSections(valid, (f) => {
      const l = sectionOf(f, SECTION.l);
      l.data.copy(l.data, 0, G1, 2 * G1);
    });
    const answer = await bob.sendUpload(CIRCUIT, tamperedL, asDelta);
    assert.equal(answer.status, 204, JSON.stringify(answer));
    const me = await bob.waitFor(
      (m) => m.status.lastRefusal?.code === 'contribution.l_section_invalid',
      'the refusal of a tampered L',
      120_000,
    );
    assert.equal(me.status.lastRefusal?.circuit, CIRCUIT);
    // Its points are on the curve and where the head's are: summed as it arrived, refused from those sums.
    assert.deepEqual(lastSplice(), { asItArrived: true, sums: true });
    assert.deepEqual(await chainState(bob), before, 'after the verifier refused the tampered L');

    // A point the intake finds off the curve, or a point at infinity out of place, is the delta's
    // verdict: handed in and refused with the verifier's code, the verifier never asked to read L
    // and H a second time to find it.
    const refusedAsItArrived: Array<{ what: string; bytes: Buffer; code: string; message: RegExp }> = [
      {
        what: 'an H point off the curve',
        bytes: editSections(valid, (f) => {
          const h = sectionOf(f, SECTION.h);
          h.data[G1 / 2] = h.data[G1 / 2]! ^ 1;
        }),
        code: 'contribution.point_not_on_curve',
        message: /^point 0 of the H section is not a point of the curve$/,
      },
      {
        what: 'an L point turned into the point at infinity',
        bytes: editSections(valid, (f) => sectionOf(f, SECTION.l).data.fill(0, G1, 2 * G1)),
        code: 'contribution.identity_pattern_changed',
        message: /^the L section holds the point at infinity at other places than the chain head does/,
      },
    ];
    for (const refused of refusedAsItArrived) {
      await turnOn(bob);
      const [splices, verifications] = [
        count('contribution delta spliced onto the head'),
        count('contribution uploaded, verifying'),
      ];
      const sent = await bob.sendUpload(CIRCUIT, refused.bytes, asDelta);
      assert.equal(sent.status, 204, `${refused.what}: ${JSON.stringify(sent)}`);
      const me = await bob.waitFor(
        (m) => m.contributions.some((c) => c.id === sent.contributionId && c.status === 'refused'),
        `the refusal of ${refused.what}`,
        120_000,
      );
      assert.equal(me.status.lastRefusal?.code, refused.code, refused.what);
      assert.match(me.status.lastRefusal?.message ?? '', refused.message, refused.what);
      assert.equal(count('contribution delta spliced onto the head'), splices, `${refused.what}: no key spliced`);
      assert.equal(count('contribution uploaded, verifying'), verifications, `${refused.what}: no verifier asked`);
      assert.deepEqual(await chainState(bob), before, refused.what);
      assert.deepEqual(await uploadsLeft(), [], `${refused.what}: no upload is left behind`);
    }
    assert.deepEqual(sumsLeft(), [], 'no sums are left behind');
    await bob.request('POST', '/api/me/leave');
  },
);

test('a delta cut midway resumes from the coordinator’s offset and is still taken in as it arrives', async () => {
  const { client: carol, inputs, head } = await onTurnWithInputs('carol');
  const delta = await contributeDelta(inputs, 'carol');
  let lBytes = 0;
  editSections(delta, (f) => (lBytes = sectionOf(f, SECTION.l).data.length));
  assert.ok(lBytes > 4 * G1, 'the test circuit has a few L points');
  // Cut inside the second of four pieces: some of L is in, the rest comes after the resumption.
  const pieceBytes = Math.ceil(delta.length / 4);
  const cutAt = pieceBytes + Math.floor(pieceBytes / 2) + 3;
  const answer = await carol.sendUploadInPieces(
    CIRCUIT,
    delta,
    { format: DELTA_FORMAT, head: String(head) },
    {
      pieceBytes,
      cutAt,
    },
  );
  assert.equal(answer.status, 204, JSON.stringify(answer));
  assert.ok(
    answer.offsetAfterCut !== undefined && answer.offsetAfterCut > pieceBytes && answer.offsetAfterCut <= cutAt,
    `the coordinator kept the cut request's bytes (offset ${answer.offsetAfterCut}, cut at ${cutAt})`,
  );
  await carol.waitForState(CIRCUIT, 'accepted', 'the resumed delta accepted', 120_000);
  assert.deepEqual(lastSplice(), { asItArrived: true, sums: true });
  assert.deepEqual(await uploadsLeft(), [], 'no upload is left behind');
});

test('a zkey-delta-v1 (the record after H, as older clients send it) is checked once in and accepted', async () => {
  const { client: erin, inputs, head } = await onTurnWithInputs('erin');
  const ascending = path.join(fixture.scratch, 'erin-v1.skeleton');
  await contributeFast(inputs, ascending, 'erin', 'typed entropy', { workers: 2 });
  const answer = await erin.sendUpload(CIRCUIT, await readFile(ascending), {
    format: DELTA_FORMAT_V1,
    head: String(head),
  });
  assert.equal(answer.status, 204, JSON.stringify(answer));
  await erin.waitForState(CIRCUIT, 'accepted', 'the v1 delta accepted', 120_000);
  // Not taken in as it arrived (its record comes last): checked, then spliced whole.
  assert.deepEqual(lastSplice(), { asItArrived: false, sums: false });
  assert.equal(lastSpliceLine().fields?.format, DELTA_FORMAT_V1);
  assert.deepEqual(await uploadsLeft(), [], 'no upload is left behind');
});

test('temporary keys a stopped coordinator left in its uploads folder are removed at its start', async () => {
  const directory = path.join(fixture.coordinator.dataDir, 'uploads', CIRCUIT);
  await mkdir(directory, { recursive: true });
  // Named as an intake names the key it splices (a crash leaves it where it was being written).
  const leftover = tempPathFor(path.join(directory, 'an-upload-cut-off-by-a-crash'));
  await writeFile(leftover, Buffer.alloc(4096));
  await fixture.coordinator.restart();
  await fixture.coordinator.uploads.leftoversRemoved;
  assert.equal(await stat(leftover).catch(() => 'gone'), 'gone', 'the leftover temporary key is removed');
  assert.deepEqual(await uploadsLeft(), [], 'nothing else is left in the uploads folder');
});

test('a delta whose turn ends while it is taken in is refused at hand-in; its key and sums are not left', async () => {
  const { client: dave, inputs, head } = await onTurnWithInputs('dave');
  const delta = await contributeDelta(inputs, 'dave');
  // The turn ends between the last byte and the hand-in (a deadline, a leave): the real lobby's
  // leave, at the one moment a test can reach deterministically.
  const { service, lobby } = fixture.coordinator;
  const submit = service.submit.bind(service);
  let handedInSums: Buffer | null | undefined;
  service.submit = (upload) => {
    handedInSums = sumsOnRow(upload.path);
    lobby.leave(upload.principal.id);
    return submit(upload);
  };
  try {
    const answer = await dave.sendUpload(CIRCUIT, delta, {
      format: DELTA_FORMAT,
      head: String(head),
    });
    assert.equal(answer.code, 'lobby.not_your_turn', JSON.stringify(answer));
  } finally {
    service.submit = submit;
  }
  // The key was taken in with its sums for the verifier, which will never run on it: on its
  // candidate row when it was handed in, gone with the row.
  assert.deepEqual(lastSplice(), { asItArrived: true, sums: true });
  assert.ok(handedInSums && handedInSums.length > 0, 'the sums were on the candidate row at the hand-in');
  assert.deepEqual(await uploadsLeft(), [], 'no upload is left behind');
  assert.deepEqual(sumsLeft(), [], 'no sums are left behind');
});
