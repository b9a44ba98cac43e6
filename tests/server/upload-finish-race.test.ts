/**
 * An upload's last byte, and what a hostile turn holder can send after it, over real HTTP and tus
 * against a real coordinator (embedded verifier):
 *  - while a delta is being finished (held at the hand-in by the test), twenty empty PATCHes at its
 *    end offset, a chunked one-byte PATCH there and a DELETE are all refused (409
 *    upload.complete): none takes the delta in again, none removes the candidate the finish hands
 *    in, none leaves a temporary key; the delta is handed in once and accepted;
 *  - a temporary key without an owner is swept while the coordinator runs, and one an intake is
 *    writing is not;
 *  - the free-space check counts what an upload under way and its intake will still write.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { recordedCoordinator } from '../helpers/recorded-coordinator.ts';
import { sectionOf, splitSections } from '../helpers/zkey-tamper.ts';
import { kernelDelta } from '../helpers/kernel-delta.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';
import { isTempPath, tempPathFor } from '../../core/fs/atomic-write.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';

const CIRCUIT = 'register';
/** The coordinator the tests take turns on, and their scratch folder. */
const fixture = recordedCoordinator('upload-finish-race-');
/** The coordinator's log lines (warnings also go to stderr). */
const logged = fixture.logged;

async function contributorOnTurn(name: string): Promise<ContributorClient> {
  const client = new ContributorClient(fixture.coordinator.url);
  await client.signInDemo(name);
  await client.join();
  await client.waitForState(CIRCUIT, 'turn', 'a turn');
  return client;
}

/** The head's inputs, a kernel contribution on them, as a streaming client sends it (v2); and the head. */
async function deltaOnHead(client: ContributorClient, name: string): Promise<{ delta: Buffer; head: number }> {
  const inputs = path.join(fixture.scratch, `${name}.inputs`);
  const { head } = await client.downloadInputs(CIRCUIT, inputs);
  return { delta: await kernelDelta(inputs, path.join(fixture.scratch, `${name}.skeleton`), name), head };
}

const uploadsFolder = (): string => path.join(fixture.coordinator.dataDir, 'uploads', CIRCUIT);

async function temporaryKeys(): Promise<string[]> {
  return (await readdir(uploadsFolder()).catch(() => [])).filter(isTempPath);
}

/** Holds every hand-in at the service until `release` is called: the finish of an upload, frozen. */
function holdHandIns(): { reached: Promise<void>; release: () => void; restore: () => void } {
  const { service } = fixture.coordinator;
  const submit = service.submit.bind(service);
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  service.submit = async (upload) => {
    reach();
    await released;
    return submit(upload);
  };
  return { reached, release, restore: () => (service.submit = submit) };
}

test('PATCHes and a DELETE after the last byte of a delta being finished are refused; it is taken once', async () => {
  const alice = await contributorOnTurn('alice');
  const { delta, head } = await deltaOnHead(alice, 'alice');
  const held = holdHandIns();
  try {
    const created = await alice.createUpload(CIRCUIT, {
      length: delta.length,
      metadata: { format: DELTA_FORMAT, head: String(head) },
    });
    assert.equal(created.status, 201, await created.text());
    const url = alice.uploadUrl(created);
    const last = alice.patch(url, 0, new Uint8Array(delta));
    await held.reached; // its last byte is in, its key spliced: the finish waits at the hand-in

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => alice.patch(url, delta.length, new Uint8Array(0))),
    );
    for (const answer of answers) {
      const refused = await alice.refusal(answer);
      assert.deepEqual([refused.status, refused.code], [409, 'upload.complete'], refused.message);
    }
    // A chunked body (no Content-Length) of one byte at the end offset.
    const oneByte = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(new Uint8Array([7]));
        controller.close();
      },
    });
    const chunked = await alice.refusal(await alice.patch(url, delta.length, oneByte));
    assert.deepEqual([chunked.status, chunked.code], [409, 'upload.complete']);
    const deleted = await alice.refusal(await fetch(url, { method: 'DELETE', headers: alice.tusHeaders() }));
    assert.deepEqual([deleted.status, deleted.code], [409, 'upload.complete']);

    held.release();
    const answer = await last;
    assert.equal(answer.status, 204, await answer.text());
  } finally {
    held.restore();
    held.release();
  }
  const me = await alice.waitForState(CIRCUIT, 'accepted', 'the delta accepted', 120_000);
  assert.equal(me.contributions.length, 1, 'handed in once');
  const splices = logged.filter((l) => l.message === 'contribution delta spliced onto the head');
  assert.equal(splices.length, 1, 'spliced once');
  assert.deepEqual(
    logged.filter((l) => l.message.startsWith('delta intake')).map((l) => l.message),
    [],
    'no second intake was started (nor turned off)',
  );
  assert.deepEqual(await temporaryKeys(), [], 'no temporary key is left');
  assert.deepEqual(await readdir(uploadsFolder()), [], 'nothing is left in the uploads folder');
});

test('a temporary key whose owner is gone is swept while running; an intake’s own is kept', async () => {
  const bob = await contributorOnTurn('bob');
  const { delta, head } = await deltaOnHead(bob, 'bob');
  await mkdir(uploadsFolder(), { recursive: true });
  const stray = tempPathFor(path.join(uploadsFolder(), 'an-upload-long-gone'));
  await writeFile(stray, Buffer.alloc(4096));

  // Bob's delta, sent up to the middle of L: its intake is splicing into a temporary key of its own.
  const lStart = delta.indexOf(sectionHeadBytes(SECTION.l, sectionOf(splitSections(delta), SECTION.l).data.length));
  assert.ok(lStart > 0, 'L found in the delta');
  const uploadUrl = await bob.startUpload(
    CIRCUIT,
    delta,
    { format: DELTA_FORMAT, head: String(head) },
    lStart + 12 + 64 * 2,
  );
  await waitUntil(async () => (await temporaryKeys()).length === 2, 'the intake to start its key');
  const own = (await temporaryKeys()).map((name) => path.join(uploadsFolder(), name)).find((file) => file !== stray)!;

  assert.equal(await fixture.coordinator.uploads.sweepExpired(), 0, 'no upload expired');
  assert.equal(await stat(stray).catch(() => 'gone'), 'gone', 'the ownerless key is swept');
  assert.ok(await stat(own), 'the intake’s own key is kept');

  // The free-space check counts what is still to come: the rest of the upload, and the whole key
  // its intake will write (sparse so far: the head's sections are copied once L is in).
  const headKey = (await stat(ceremonyPaths(fixture.coordinator.dataDir).zkeyPath(CIRCUIT, head))).size;
  const idle = await requiredFigure();
  assert.ok(idle.inFlight >= headKey, `in flight ${idle.inFlight} B, a whole key ${headKey} B`);

  await bob.upload(CIRCUIT, delta, { uploadUrl, metadata: { format: DELTA_FORMAT, head: String(head) } });
  await bob.waitForState(CIRCUIT, 'accepted', 'the delta accepted', 120_000);
  assert.deepEqual(await temporaryKeys(), [], 'its key became the candidate');
  assert.ok((await requiredFigure()).inFlight < idle.inFlight, 'nothing more in flight once it is in');
});

function sectionHeadBytes(id: number, size: number): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(id, 0);
  head.writeBigUInt64LE(BigInt(size), 4);
  return head;
}

/**
 * The free space the coordinator requires before a new upload (/metrics), and how much of it is
 * for work in flight: the required figure less the largest upload and the margin.
 */
async function requiredFigure(): Promise<{ required: number; inFlight: number }> {
  const text = await (await fetch(`${fixture.coordinator.url}/metrics`)).text();
  const match = /^ceremony_upload_disk_required_bytes (\S+)$/m.exec(text);
  assert.ok(match, 'the required free space is in /metrics');
  const required = Number(match[1]);
  let largest = 0;
  for (const circuit of fixture.coordinator.config.circuits) {
    const index = await fixture.coordinator.service.headIndex(circuit.name);
    largest = Math.max(
      largest,
      (await stat(ceremonyPaths(fixture.coordinator.dataDir).zkeyPath(circuit.name, index))).size,
    );
  }
  const margin = 1024 ** 3; // UPLOAD_DISK_MARGIN_BYTES's default
  return { required, inFlight: required - (largest + 64 * 1024) - margin };
}
