/**
 * The coordinator's receipt key: created once, private (0600), and the same for coordinators that
 * start together on one state folder, so every receipt verifies against the published key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ReceiptSigner, verifyReceipt } from '../../server/contributions/receipt-signer.ts';

const body = { ceremony: 'c', circuit: 'register', index: 1, contributor: 'alice', contributionHash: 'ab', fileHash: 'cd', acceptedAt: '2026-11-23T00:00:00Z' };

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
