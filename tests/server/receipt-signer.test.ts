/**
 * The coordinator's receipt key: created once, private (0600), and the same for coordinators that
 * start together on one state folder, so every receipt verifies against the published key; a
 * coordinator never publishes a new key over the one receipts were signed with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ReceiptSigner, verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import { RECEIPT_PUBLIC_KEY_FILE } from '../../core/receipts/receipt-public-key-file.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';

const body = {
  ceremony: 'c',
  circuit: 'register',
  index: 1,
  contributor: 'alice',
  contributionHash: 'ab',
  fileHash: 'cd',
  acceptedAt: '2026-11-23T00:00:00Z',
};

test('coordinators starting together on one state folder agree on one private receipt key', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'receipt-key-'));
  try {
    const keyFile = path.join(dir, 'state', 'receipt-key.pem');
    const signers = await Promise.all(Array.from({ length: 8 }, () => ReceiptSigner.fromKeyFile(keyFile)));
    assert.equal(new Set(signers.map((s) => s.publicKeyPem)).size, 1, 'one key for all');
    const receipt = signers[3]!.sign(body);
    const restarted = await ReceiptSigner.fromKeyFile(keyFile);
    assert.equal(restarted.publicKeyPem, signers[0]!.publicKeyPem, 'a restart loads the same key');
    assert.equal(verifyReceipt(receipt, restarted.publicKeyPem), true);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.equal((await stat(path.dirname(keyFile))).mode & 0o777, 0o700);
    assert.deepEqual(await readdir(path.dirname(keyFile)), ['receipt-key.pem'], 'no temporary file left');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  'a coordinator whose receipt key is not the published one refuses to ' +
    'start, until the operator moves the published key aside',
  async () => {
    const coordinator = await startTestCoordinator();
    const dataDir = coordinator.dataDir;
    const published = path.join(dataDir, RECEIPT_PUBLIC_KEY_FILE);
    try {
      const first = await readFile(published, 'utf8');
      await coordinator.stop();
      // state/ lost (or another coordinator's): a new signing key would be made at the next start.
      await rm(path.join(dataDir, 'state', 'receipt-key.pem'));
      await assert.rejects(coordinator.restart(), (error: unknown) => {
        assert.ok(isCoordinatorError(error), String(error));
        assert.equal(error.code, 'config.invalid');
        assert.match(error.message, /receipts already handed out verify only against the published one/);
        assert.ok(!error.message.includes(dataDir), 'no path in the message');
        return true;
      });
      assert.equal(await readFile(published, 'utf8'), first, 'the published key is left as it was');
      await rename(published, `${published}.old`);
      await coordinator.restart();
      assert.notEqual(
        await readFile(published, 'utf8'),
        first,
        'the new key is published once the old one is moved aside',
      );
    } finally {
      await coordinator.close();
    }
  },
);
