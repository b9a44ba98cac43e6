/**
 * The coordinator's start-up policy, each rule on its own (server/startup/): the phase brought in
 * line with the transcript (finalised on disk wins, an interrupted finalisation goes back to
 * closed, an announced beacon closes it, OPEN_ON_START opens only a ceremony in setup), the
 * receipt key published but never over another one, and the closer stack that stops what a start
 * made, in reverse, once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isCoordinatorError } from '../../core/errors.ts';
import { RECEIPT_PUBLIC_KEY_FILE } from '../../core/receipts/receipt-public-key-file.ts';
import { phaseStoreIn } from '../helpers/phase-store-in.ts';
import { CloserStack } from '../../server/startup/closer-stack.ts';
import { publishReceiptKey } from '../../server/startup/publish-receipt-key.ts';
import { reconcilePhaseWithTranscript } from '../../server/startup/reconcile-phase.ts';

test('a transcript that says finalised wins over any phase SQLite kept', () => {
  for (const before of ['setup', 'open', 'paused', 'closed', 'finalising'] as const) {
    const phase = phaseStoreIn(before);
    const found = reconcilePhaseWithTranscript(phase, { finalisedInTranscript: true, openOnStart: true, now: 5 });
    assert.equal(found, 'finalised_from_transcript', before);
    assert.equal(phase.get(), 'finalised', `${before} → finalised`);
    assert.equal(phase.finalisationInterruptedAt(), undefined, `${before}: no interruption is shown`);
  }
  const finalised = phaseStoreIn('finalised');
  assert.equal(
    reconcilePhaseWithTranscript(finalised, { finalisedInTranscript: true, openOnStart: false, now: 5 }),
    'in_line',
  );
});

test('a finalisation the transcript does not hold was interrupted: closed again, and the time kept', () => {
  const phase = phaseStoreIn('finalising');
  const found = reconcilePhaseWithTranscript(phase, { finalisedInTranscript: false, openOnStart: true, now: 7 });
  assert.equal(found, 'finalisation_interrupted');
  assert.equal(phase.get(), 'closed', 'not reopened by OPEN_ON_START either');
  assert.equal(phase.finalisationInterruptedAt(), 7);
});

test('OPEN_ON_START opens a ceremony in setup and leaves every other phase as it was', () => {
  for (const before of ['setup', 'open', 'paused', 'closed'] as const) {
    const phase = phaseStoreIn(before);
    const found = reconcilePhaseWithTranscript(phase, { finalisedInTranscript: false, openOnStart: true, now: 3 });
    assert.equal(found, 'in_line');
    assert.equal(phase.get(), before === 'setup' ? 'open' : before, before);
  }
  const untouched = phaseStoreIn('setup');
  reconcilePhaseWithTranscript(untouched, { finalisedInTranscript: false, openOnStart: false, now: 3 });
  assert.equal(untouched.get(), 'setup');
});

test('a beacon announced in the transcript closes a ceremony that would grant turns, OPEN_ON_START or not', () => {
  const facts = { finalisedInTranscript: false, beaconAnnouncedInTranscript: true, openOnStart: true, now: 4 };
  for (const before of ['setup', 'open', 'paused'] as const) {
    const phase = phaseStoreIn(before);
    assert.equal(reconcilePhaseWithTranscript(phase, facts), 'closed_by_beacon_announcement', before);
    assert.equal(phase.get(), 'closed', `${before} → closed`);
  }
  const closed = phaseStoreIn('closed');
  assert.equal(reconcilePhaseWithTranscript(closed, facts), 'in_line');
  assert.equal(closed.get(), 'closed');
});

test('the receipt key is published, kept when it is the same, and never written over another', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'publish-receipt-key-'));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const pem = () => generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const published = path.join(dataDir, RECEIPT_PUBLIC_KEY_FILE);
  const first = pem();

  await publishReceiptKey(dataDir, first);
  assert.equal(await readFile(published, 'utf8'), first, 'published when there was none');
  await publishReceiptKey(dataDir, first);
  assert.equal(await readFile(published, 'utf8'), first, 'the same key again: nothing changes');

  await assert.rejects(publishReceiptKey(dataDir, pem()), (error: unknown) => {
    assert.ok(isCoordinatorError(error, 'config.invalid'), String(error));
    assert.match(error.message, /receipts already handed out verify only against the published one/);
    assert.ok(!error.message.includes(dataDir), 'no path in the message');
    return true;
  });
  assert.equal(await readFile(published, 'utf8'), first, 'the published key is left as it was');
  assert.deepEqual(await readdir(dataDir), [RECEIPT_PUBLIC_KEY_FILE], 'no temporary file left');

  await writeFile(published, 'not a key');
  await assert.rejects(publishReceiptKey(dataDir, first), (error: unknown) =>
    isCoordinatorError(error, 'receipt.key_unavailable'),
  );
});

test('the closer stack runs each closer once, last made first, and all of them when one fails', async () => {
  const ran: string[] = [];
  const closers = new CloserStack();
  closers.add('database', () => void ran.push('database'));
  closers.add('verifier', async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    ran.push('verifier');
    throw new Error('the verifier did not stop');
  });
  closers.add('server', () => void ran.push('server'));

  const first = closers.close();
  assert.equal(closers.close(), first, 'a second close waits for the first');
  await assert.rejects(first, /closing verifier: the verifier did not stop/);
  assert.deepEqual(ran, ['server', 'verifier', 'database'], 'reverse order, none skipped after the failure');
  await assert.rejects(closers.close(), /closing verifier/);
  assert.deepEqual(ran, ['server', 'verifier', 'database'], 'nothing runs twice');
  assert.throws(() => closers.add('late', () => undefined), /already closing/);
});

test('two failing closers are both reported', async () => {
  const closers = new CloserStack();
  closers.add('a', () => Promise.reject(new Error('one')));
  closers.add('b', () => {
    throw new Error('two');
  });
  await assert.rejects(closers.close(), (error: unknown) => {
    assert.ok(error instanceof AggregateError);
    assert.deepEqual(
      error.errors.map((e: Error) => e.message),
      ['closing b: two', 'closing a: one'],
    );
    return true;
  });
});
