/**
 * Malformed uploads over real HTTP against a real coordinator (embedded verifier): each is a
 * refusal of the contribution, a verdict with its own code (the turn ends, the contributor sees
 * why), never an `error` that gives the turn back; each is refused on its structure before any
 * per-element work (no hash of the file, no verifier asked: the log never says `contribution
 * uploaded, verifying` for it), and no refusal or log line repeats the upload at its size.
 *  - whole keys: a header with as many empty sections as the key's length holds (the review's
 *    upload: before, every section was hashed, the verifier's request did not parse, and the verdict
 *    was `error`), a huge count, ids twice or out of order, sizes that overflow or do not sum to the
 *    file, wrong point counts, a truncated file, a record with a huge count or a failing proof;
 *  - deltas: a table count far above the head's, as v2 (refused on its first 12 bytes as it
 *    arrives) and as v1 (checked once complete, on its count before any entry); sections that do
 *    not fill the upload's length (refused at the history's header, before any point);
 *  - a whole key or a v1 delta whose table breaks its rules is refused at the PATCH after the entry
 *    that breaks it arrived (its table followed as it arrives), not once all of it was received;
 *  - a whole key whose header but δ, or IC, A, B1, B2, is not the head's is refused at the PATCH
 *    after the byte that differs (compared with the head's as it arrives), or, sent in one PATCH,
 *    when it is finished, before any hash or verifier;
 *  - an unfinished upload whose turn ended is deleted then, not an hour later;
 *  - PATCH and HEAD of uploads have a limit per contributor, with its own code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { recordedCoordinator } from '../helpers/recorded-coordinator.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';
import { editSections, emptySections, G1, sectionOf, splitSections } from '../helpers/zkey-tamper.ts';
import { kernelDelta } from '../helpers/kernel-delta.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { DELTA_FORMAT, DELTA_FORMAT_V1 } from '../../core/delta/delta-format.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { ManualClock } from '../../server/clock.ts';

const CIRCUIT = 'register';
// Each refusal is a missed turn: the contributors here are refused many times in a row, on purpose.
// Every upload here is to one circuit's queue: a ceremony of that circuit alone shows each refusal, and
// starts without making and preparing eight other chains.
const ONE_CIRCUIT = { circuits: [CIRCUIT] };
const fixture = recordedCoordinator('malformed-uploads-', { MAX_MISSED_TURNS: '1000' }, ONE_CIRCUIT);

/** The offset of the `index`-th section's table entry in `bytes`. */
function entryOffset(bytes: Buffer, index: number): number {
  let at = 12;
  for (let i = 0; i < index; i++) at += 12 + Number(bytes.readBigUInt64LE(at + 4));
  return at;
}

function changed(bytes: Buffer, change: (copy: Buffer) => void): Buffer {
  const copy = Buffer.from(bytes);
  change(copy);
  return copy;
}

const verifying = (): number =>
  fixture.logged.filter((line) => line.message === 'contribution uploaded, verifying').length;

/**
 * Sends `bytes` as one upload on the client's turn and waits for its verdict: a refusal with
 * `code` and a message matching `rule`, reached with no verifier asked and no hash of the file.
 */
async function refusedAsVerdict(
  client: ContributorClient,
  what: string,
  bytes: Buffer,
  expected: { code: string; rule: RegExp; metadata?: Record<string, string> },
): Promise<void> {
  await client.waitForState(CIRCUIT, 'turn', `the turn for ${what}`);
  const before = verifying();
  const sent = await client.sendUpload(CIRCUIT, bytes, expected.metadata);
  assert.equal(sent.status, 204, `${what}: handed in with its refusal (${JSON.stringify(sent)})`);
  const me = await client.waitFor(
    (m) => m.contributions.some((c) => c.id === sent.contributionId && c.status !== 'verifying'),
    `the verdict on ${what}`,
  );
  const verdict = me.contributions.find((c) => c.id === sent.contributionId)!;
  assert.deepEqual([verdict.status, verdict.code], ['refused', expected.code], `${what}: ${verdict.message}`);
  assert.match(verdict.message ?? '', expected.rule, what);
  assert.ok((verdict.message ?? '').length < 300, `${what}: a bounded refusal`);
  assert.equal(me.status.lastRefusal?.code, expected.code, `${what}: the contributor sees why`);
  assert.equal(verifying(), before, `${what}: no verifier asked, the file never hashed`);
  const left = await readdir(path.join(fixture.coordinator.dataDir, 'uploads', CIRCUIT)).catch(() => []);
  assert.deepEqual(left, [], `${what}: no upload is left behind`);
}

test('malformed whole keys are refused verdicts with their codes, before any hash or verifier', async () => {
  const alice = new ContributorClient(fixture.coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
  await alice.waitForState(CIRCUIT, 'turn', 'alice’s turn');
  const next = await readFile((await alice.makeContribution(CIRCUIT)).file);
  const entry = (index: number): number => entryOffset(next, index);
  const historyEntry = entry(9);
  // The new record follows the head's history: δ, g1_s, g1_sx (G1), g2_spx (G2), then its transcript digest.
  const headKey = Buffer.from(
    await (await fetch(`${fixture.coordinator.url}/api/circuits/${CIRCUIT}/zkeys/0`)).arrayBuffer(),
  );
  const recordDigest = historyEntry + 12 + sectionOf(splitSections(headKey), SECTION.mpc).data.length + 5 * G1;
  const shapes: Array<[string, Buffer, string, RegExp]> = [
    ['as many empty sections as the key holds', emptySections(next), 'zkey.section_table_mismatch', /declares \d+/],
    [
      'a count of 2^32 - 1',
      changed(next, (b) => b.writeUInt32LE(0xffffffff, 8)),
      'zkey.section_table_mismatch',
      /declares 4294967295 sections, the head has 10/,
    ],
    [
      'an id twice',
      changed(next, (b) => b.writeUInt32LE(2, entry(2))),
      'zkey.section_table_mismatch',
      /entry 3 is section 2/,
    ],
    [
      'sections out of order',
      editSections(next, (f) => {
        [f.sections[2], f.sections[3]] = [f.sections[3]!, f.sections[2]!];
      }),
      'zkey.section_table_mismatch',
      /entry 3 is section 4/,
    ],
    [
      'a size that overflows',
      changed(next, (b) => b.writeBigUInt64LE(0xffffffffffffffffn, entry(7) + 4)),
      'zkey.section_table_mismatch',
      /section 8 is 18446744073709551615 bytes/,
    ],
    [
      'one point less in L, one more in H',
      editSections(next, (f) => {
        const [l, h] = [sectionOf(f, SECTION.l), sectionOf(f, SECTION.h)];
        h.data = Buffer.concat([h.data, l.data.subarray(0, G1)]);
        l.data = l.data.subarray(G1);
      }),
      'zkey.section_table_mismatch',
      /section 8 is \d+ bytes, the head's \d+/,
    ],
    [
      'sizes that run past the file',
      changed(next, (b) => b.writeBigUInt64LE(b.readBigUInt64LE(historyEntry + 4) + 8n, historyEntry + 4)),
      'zkey.malformed',
      /truncated inside section 10/,
    ],
    ['truncated', next.subarray(0, next.length - 8), 'zkey.malformed', /truncated inside section 10/],
    [
      'a history counting 2^32 - 1 records',
      changed(next, (b) => b.writeUInt32LE(0xffffffff, historyEntry + 12 + 64)),
      'zkey.malformed',
      /MPC section truncated/,
    ],
    [
      'a record whose proof of knowledge fails',
      changed(next, (b) => (b[recordDigest + 3] = b[recordDigest + 3]! ^ 0xff)),
      'contribution.invalid_proof_of_knowledge',
      /transcript digest/,
    ],
  ];
  for (const [what, bytes, code, rule] of shapes) await refusedAsVerdict(alice, what, bytes, { code, rule });
  // Every line the coordinator logged for these is bounded, whatever the upload declared.
  const longest = Math.max(...fixture.logged.map((line) => JSON.stringify(line).length));
  assert.ok(longest < 2000, `the longest log line is ${longest} characters`);
  // The valid key from which each was made is still taken: each refusal was the shape's.
  await alice.waitForState(CIRCUIT, 'turn', 'the turn again');
  const answer = await alice.sendUpload(CIRCUIT, next);
  assert.equal(answer.status, 204, JSON.stringify(answer));
  await alice.waitForState(CIRCUIT, 'accepted', 'the valid key accepted', 120_000);
});

/**
 * Sends the first `sent` bytes of `bytes` as an upload of their full length, then empty PATCHes at that offset until
 * one is refused (the table check follows the upload's file after each write): that refusal and the verdict.
 */
async function refusedAtAPatch(
  client: ContributorClient,
  bytes: Buffer,
  sent: number,
  metadata: Record<string, string> = {},
): Promise<{ status: number; code: string; verdict: string }> {
  await client.waitForState(CIRCUIT, 'turn', 'the turn');
  const before = (await client.me()).contributions.length;
  const url = await client.startUpload(CIRCUIT, bytes, metadata, sent);
  let refused: Response | undefined;
  await waitUntil(async () => {
    const answer = await client.patch(url, sent, new Uint8Array(0));
    if (answer.status === 204) return false;
    refused = answer;
    return true;
  }, 'a PATCH refused');
  const { status, code } = await client.refusal(refused!);
  const me = await client.waitFor((m) => m.contributions.length > before, 'the verdict');
  const verdict = me.contributions.at(-1)!;
  return { status, code, verdict: `${verdict.status} ${verdict.code}` };
}

test('a whole key or v1 delta whose table breaks its rules is refused at the next PATCH, not at its end', async () => {
  const erin = new ContributorClient(fixture.coordinator.url);
  await erin.signInDemo('erin');
  await erin.join();
  await erin.waitForState(CIRCUIT, 'turn', 'erin’s turn');
  const inputs = path.join(fixture.scratch, 'erin-head.skeleton');
  const { head } = await erin.downloadInputs(CIRCUIT, inputs);
  const key = await readFile((await erin.makeContribution(CIRCUIT)).file);
  const counted = changed(key, (b) => b.writeUInt32LE(0xffffffff, 8));
  assert.deepEqual(await refusedAtAPatch(erin, counted, 4096), {
    status: 422,
    code: 'zkey.section_table_mismatch',
    verdict: 'refused zkey.section_table_mismatch',
  });
  const v1File = path.join(fixture.scratch, 'erin-v1.skeleton');
  await kernelDelta(inputs, v1File, 'erin'); // leaves the delta in v1's order (ascending ids) there
  const v1Counted = changed(await readFile(v1File), (b) => b.writeUInt32LE(0xffffffff, 8));
  assert.deepEqual(await refusedAtAPatch(erin, v1Counted, 64, { format: DELTA_FORMAT_V1, head: String(head) }), {
    status: 422,
    code: 'delta.malformed',
    verdict: 'refused delta.malformed',
  });
  // Deleting it, or replacing it with a new upload, once its refusal was found does not take the verdict back.
  await erin.waitForState(CIRCUIT, 'turn', 'the turn');
  const before = (await erin.me()).contributions.length;
  const url = await erin.startUpload(CIRCUIT, counted, {}, 4096);
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // the check follows the write at once
  const deleted = await fetch(url, { method: 'DELETE', headers: erin.tusHeaders() });
  assert.deepEqual([deleted.status, (await erin.refusal(deleted)).code], [422, 'zkey.section_table_mismatch']);
  const me = await erin.waitFor((m) => m.contributions.length > before, 'the verdict');
  assert.deepEqual(
    [me.contributions.at(-1)!.status, me.contributions.at(-1)!.code],
    ['refused', 'zkey.section_table_mismatch'],
  );
  // With someone queued behind her, the verdict found on replacing it passes the turn on: no new upload is made.
  await erin.waitForState(CIRCUIT, 'turn', 'the turn again');
  const frank = new ContributorClient(fixture.coordinator.url);
  await frank.signInDemo('frank');
  await frank.join();
  const beforeReplacing = (await erin.me()).contributions.length;
  await erin.startUpload(CIRCUIT, counted, {}, 4096);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const replacing = await erin.refusal(await erin.createUpload(CIRCUIT, { length: key.length }));
  assert.deepEqual([replacing.status, replacing.code], [409, 'lobby.not_your_turn'], 'its verdict ended the turn');
  const replaced = await erin.waitFor((m) => m.contributions.length > beforeReplacing, 'the verdict');
  assert.equal(replaced.contributions.at(-1)!.code, 'zkey.section_table_mismatch');
  assert.equal((await frank.progress(CIRCUIT)).state, 'turn', 'the turn passed on');
  fixture.coordinator.lobby.leave('demo:frank');
  fixture.coordinator.lobby.leave('demo:erin'); // she would hold the turn after each refusal of the next test's
  const left = await readdir(path.join(fixture.coordinator.dataDir, 'uploads', CIRCUIT)).catch(() => []);
  assert.deepEqual(left, [], 'no upload is left behind');
});

test('a whole key whose header but δ, IC, A, B1 or B2 is not the head’s is refused as those bytes arrive', async () => {
  const gina = new ContributorClient(fixture.coordinator.url);
  await gina.signInDemo('gina');
  await gina.join();
  await gina.waitForState(CIRCUIT, 'turn', 'gina’s turn');
  const key = await readFile((await gina.makeContribution(CIRCUIT)).file);
  // A contribution writes its sections in ascending order: section `id`'s entry is the `id`-th.
  const lastByteOf = (id: number): number => {
    const entry = entryOffset(key, id - 1);
    return entry + 12 + Number(key.readBigUInt64LE(entry + 4)) - 1;
  };
  const icAt = entryOffset(key, SECTION.ic - 1) + 12 + 5;
  const nVarsAt = entryOffset(key, SECTION.grothHeader - 1) + 12 + 72; // after n8q, q, n8r, r
  const flip = (at: number): Buffer => changed(key, (b) => (b[at] = b[at]! ^ 1));
  const shapes: Array<[string, Buffer, number, string, RegExp]> = [
    [
      'another circuit’s header (nVars + 1)',
      changed(key, (b) => b.writeUInt32LE(b.readUInt32LE(nVarsAt) + 1, nVarsAt)),
      lastByteOf(SECTION.grothHeader),
      'contribution.wrong_circuit',
      /another circuit/,
    ],
    ['IC changed', flip(icAt), icAt, 'contribution.header_mismatch', /the IC section differs/],
    [
      'A’s last byte changed',
      flip(lastByteOf(SECTION.a)),
      lastByteOf(SECTION.a),
      'contribution.header_mismatch',
      /the A section/,
    ],
    [
      'B1’s last byte changed',
      flip(lastByteOf(SECTION.b1)),
      lastByteOf(SECTION.b1),
      'contribution.header_mismatch',
      /the B1 section/,
    ],
    [
      'B2’s last byte changed',
      flip(lastByteOf(SECTION.b2)),
      lastByteOf(SECTION.b2),
      'contribution.header_mismatch',
      /the B2 section/,
    ],
  ];
  for (const [what, bytes, fault, code, rule] of shapes) {
    // Sent up to the byte that differs, far from its end: a PATCH after it is refused, the upload handed in with it.
    assert.ok(fault + 1 < bytes.length - 1024, what);
    assert.deepEqual(
      await refusedAtAPatch(gina, bytes, fault + 1),
      { status: 422, code, verdict: `refused ${code}` },
      what,
    );
    // Sent in one PATCH: refused when it is finished, with no verifier asked and the file never hashed.
    await refusedAsVerdict(gina, `${what}, in one PATCH`, bytes, { code, rule });
  }
  // The key each was made from is still taken, in one PATCH or in several.
  await gina.waitForState(CIRCUIT, 'turn', 'the turn again');
  const answer = await gina.sendUploadInPieces(CIRCUIT, key, {}, { pieceBytes: 16 * 1024 });
  assert.equal(answer.status, 204, JSON.stringify(answer));
  await gina.waitForState(CIRCUIT, 'accepted', 'the valid key accepted', 120_000);
});

test('a delta whose table counts far more sections than the head’s is a refused verdict, v2 and v1', async () => {
  const bob = new ContributorClient(fixture.coordinator.url);
  await bob.signInDemo('bob');
  await bob.join();
  await bob.waitForState(CIRCUIT, 'turn', 'bob’s turn');
  const inputs = path.join(fixture.scratch, 'bob-head.skeleton');
  const { head } = await bob.downloadInputs(CIRCUIT, inputs);
  const delta = await kernelDelta(inputs, path.join(fixture.scratch, 'bob-v1.skeleton'), 'bob');
  const asV2 = { format: DELTA_FORMAT, head: String(head) };
  const asV1 = { format: DELTA_FORMAT_V1, head: String(head) };
  await refusedAsVerdict(
    bob,
    'a v2 delta counting 2^32 - 1 sections',
    changed(delta, (b) => b.writeUInt32LE(-1 >>> 0, 8)),
    {
      code: 'delta.malformed',
      rule: /declares 4294967295 sections, the head has 10/,
      metadata: asV2,
    },
  );
  await refusedAsVerdict(bob, 'a v2 delta of empty sections', emptySections(delta), {
    code: 'delta.malformed',
    rule: /declares \d+ sections, the head has 10/,
    metadata: asV2,
  });
  await refusedAsVerdict(
    bob,
    'a v2 delta 64 bytes longer than its sections',
    Buffer.concat([delta, Buffer.alloc(64)]),
    {
      code: 'delta.malformed',
      rule: /its sections add up to \d+ bytes, the upload declares \d+/,
      metadata: asV2,
    },
  );
  await refusedAsVerdict(bob, 'a v1 delta of empty sections', emptySections(delta), {
    code: 'delta.malformed',
    rule: /expected 10 sections, found \d+/,
    metadata: asV1,
  });
});

test('an unfinished upload whose turn ended is deleted then, or at the next sweep if no event came', async () => {
  const clock = new ManualClock(Date.now());
  const coordinator = await startTestCoordinator({ clock, tickIntervalMs: 60_000, ceremony: ONE_CIRCUIT });
  try {
    const carol = new ContributorClient(coordinator.url);
    await carol.signInDemo('carol');
    await carol.join();
    assert.equal((await carol.progress(CIRCUIT)).state, 'turn');
    const uploads = path.join(coordinator.dataDir, 'uploads', CIRCUIT);
    const files = async (): Promise<string[]> => (await readdir(uploads).catch(() => [])).sort();
    const length = (await stat(ceremonyPaths(coordinator.dataDir).zkeyPath(CIRCUIT, 0))).size + 1024;
    const created = await carol.createUpload(CIRCUIT, { length });
    assert.equal(created.status, 201, await created.text());
    assert.equal((await files()).length, 2, 'the upload and its metadata');
    // The turn ends (its time passed): long before the upload's expiry, which was an hour later.
    clock.advance(coordinator.lobby.longestTurnMs + 1_000);
    assert.ok(coordinator.lobby.longestTurnMs + 1_000 < coordinator.uploads.expiryMs);
    coordinator.service.tick();
    await waitUntil(async () => (await files()).length === 0, 'the ended turn’s upload deleted');

    // Its entry removed by the coordinator (no lobby event reaches the uploads): the next sweep deletes it.
    await carol.me(); // seen again: her place comes back
    coordinator.service.tick();
    assert.equal((await carol.progress(CIRCUIT)).state, 'turn');
    const again = await carol.createUpload(CIRCUIT, { length });
    assert.equal(again.status, 201, await again.text());
    coordinator.lobby.removeEntry('demo:carol');
    assert.equal((await files()).length, 2, 'not deleted by the removal itself');
    assert.equal(await coordinator.uploads.sweepExpired(), 1);
    assert.deepEqual(await files(), []);
  } finally {
    await coordinator.close();
  }
});

test('PATCH and HEAD of uploads are limited per contributor, with their own code', async () => {
  const coordinator = await startTestCoordinator({ env: { RATE_LIMIT_UPLOAD_REQUESTS: '3' }, ceremony: ONE_CIRCUIT });
  try {
    const dave = new ContributorClient(coordinator.url);
    await dave.signInDemo('dave');
    await dave.join();
    const length = (await stat(ceremonyPaths(coordinator.dataDir).zkeyPath(CIRCUIT, 0))).size + 1024;
    const created = await dave.createUpload(CIRCUIT, { length });
    assert.equal(created.status, 201, await created.text());
    const url = dave.uploadUrl(created);
    const head = (): Promise<Response> => fetch(url, { method: 'HEAD', headers: dave.tusHeaders() });
    assert.equal((await head()).status, 200);
    assert.equal((await dave.patch(url, 0, new Uint8Array(10))).status, 204);
    assert.equal((await head()).status, 200);
    const limited = await dave.refusal(await dave.patch(url, 10, new Uint8Array(10)));
    assert.deepEqual([limited.status, limited.code], [429, 'rate.upload_requests']);
    assert.match(limited.message, /at most 3 per 60 s/);
    assert.equal((await head()).status, 429);
    // Another contributor's count is their own.
    const erin = new ContributorClient(coordinator.url);
    await erin.signInDemo('erin');
    const theirs = await fetch(url, { method: 'HEAD', headers: erin.tusHeaders() });
    assert.notEqual(theirs.status, 429);
  } finally {
    await coordinator.close();
  }
});
