/**
 * The receipt check's inputs and evidence: receipts files in every shape the coordinator and the
 * page give them (and refusals of what is not one), the coordinator's Ed25519 signature checked
 * through WebCrypto against the key the coordinator's own signer made, the receipt public key file
 * the coordinator writes (and never a private key taken for it), and the public transcript's hash
 * chain recomputed in the isomorphic module exactly as core/transcript/transcript.ts writes it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isCoordinatorError } from '../../core/errors.ts';
import { parseReceiptsJson, parseReceiptsText } from '../../core/receipts/receipts-file.ts';
import { importReceiptKey, receiptSignatureValid, samePublicKey } from '../../core/receipts/receipt-signature.ts';
import { readReceiptPublicKey, writeReceiptPublicKey } from '../../core/receipts/receipt-public-key-file.ts';
import { checkPublicTranscript, transcriptGenesisHash } from '../../core/receipts/public-transcript.ts';
import { entryHash, genesisHash, parseTranscript } from '../../core/transcript/transcript.ts';
import { receiptsCeremony, type ReceiptsCeremony } from '../helpers/receipts-ceremony.ts';

let ceremony: ReceiptsCeremony;
let work: string;

before(async () => {
  ceremony = await receiptsCeremony();
  work = await mkdtemp(path.join(tmpdir(), 'receipt-evidence-'));
});

after(async () => {
  await rm(ceremony.dataDir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

const rejectsWith = (fn: () => unknown, code: string, message: RegExp): void => {
  assert.throws(fn, (error: Error) => isCoordinatorError(error) && error.code === code && message.test(error.message));
};

describe('receipts files', () => {
  test('every shape: one receipt, a list, the /api/me/receipts answer, the page’s file', () => {
    const receipts = ceremony.receiptsOf('alice');
    const one = parseReceiptsJson(receipts[0]);
    assert.equal(one.receipts.length, 1);
    assert.equal(one.receipts[0]!.bodyText, receipts[0]!.body, 'the signed text is kept as it is');
    assert.equal(one.receipts[0]!.body.contributor, 'alice');
    assert.equal(one.receipts[0]!.contributionId, receipts[0]!.contributionId);
    assert.equal(parseReceiptsJson(receipts).receipts.length, 9);
    assert.equal(parseReceiptsJson({ receipts }).receipts.length, 9);
    const saved = parseReceiptsText(
      JSON.stringify(
        {
          ceremony: ceremony.ceremonyId,
          coordinator: 'http://127.0.0.1:8080',
          receiptPublicKey: ceremony.signer.publicKeyPem,
          signature: 'Ed25519 over each receipt body (UTF-8)',
          receipts,
        },
        null,
        2,
      ),
    );
    assert.equal(saved.receipts.length, 9);
    assert.equal(saved.receiptPublicKey, ceremony.signer.publicKeyPem);
    assert.deepEqual(
      saved.receipts.map((r) => r.position),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  });

  test('what is not a receipt is refused with what is wrong', () => {
    const [receipt] = ceremony.receiptsOf('alice');
    rejectsWith(() => parseReceiptsText('{"body": '), 'receipt.malformed', /not JSON/);
    rejectsWith(() => parseReceiptsJson({ hello: 1 }), 'receipt.malformed', /expected a receipt/);
    rejectsWith(() => parseReceiptsJson([]), 'receipt.malformed', /holds no receipt/);
    rejectsWith(() => parseReceiptsJson({ ...receipt, signature: 'abc' }), 'receipt.malformed', /no Ed25519 signature/);
    rejectsWith(
      () => parseReceiptsJson({ ...receipt, body: '{"ceremony":"x"}' }),
      'receipt.malformed',
      /the receipt: its body has no circuit/,
    );
    const body = JSON.parse(receipt!.body);
    rejectsWith(
      () => parseReceiptsJson([receipt, { ...receipt, body: JSON.stringify({ ...body, contributionHash: 'ab' }) }]),
      'receipt.malformed',
      /receipt 2: its contributionHash is not a BLAKE2b-512 hash/,
    );
    rejectsWith(
      () => parseReceiptsJson({ ...receipt, body: JSON.stringify({ ...body, index: 0 }) }),
      'receipt.malformed',
      /index is not a position/,
    );
    rejectsWith(
      () => parseReceiptsJson(Array.from({ length: 1001 }, () => receipt)),
      'receipt.malformed',
      /at most 1000/,
    );
  });
});

describe('the signature', () => {
  test('the coordinator’s signature verifies; a changed body, another key or another signature does not', async () => {
    const key = await importReceiptKey(ceremony.signer.publicKeyPem, 'the test');
    const [receipt, other] = parseReceiptsJson(ceremony.receiptsOf('alice')).receipts;
    assert.equal(await receiptSignatureValid(key, receipt!), true);
    const changed = { ...receipt!, bodyText: receipt!.bodyText.replace('"alice"', '"mallory"') };
    assert.notEqual(changed.bodyText, receipt!.bodyText);
    assert.equal(await receiptSignatureValid(key, changed), false);
    assert.equal(await receiptSignatureValid(key, { ...receipt!, signature: other!.signature }), false);
    const stranger = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    assert.equal(await receiptSignatureValid(await importReceiptKey(stranger, 'the test'), receipt!), false);
    assert.match(key.fingerprint, /^[0-9a-f]{64}$/);
  });

  test('a key that is not an Ed25519 public key is refused as unavailable, a private key included', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    await assert.rejects(
      importReceiptKey(rsa, 'the test'),
      (e: Error) => isCoordinatorError(e, 'receipt.key_unavailable') && /not an Ed25519 public key/.test(e.message),
    );
    const privatePem = await readFile(path.join(ceremony.dataDir, 'state', 'receipt-key.pem'), 'utf8');
    await assert.rejects(
      importReceiptKey(privatePem, 'the test'),
      (e: Error) => isCoordinatorError(e, 'receipt.key_unavailable') && /not a PEM public key/.test(e.message),
    );
  });

  test('the key file: written, kept on a restart, replaced (said so) for a new key; never a private key', async () => {
    const dir = await mkdtemp(path.join(work, 'key-file-'));
    const pem = ceremony.signer.publicKeyPem;
    assert.equal(await readReceiptPublicKey(dir), undefined);
    assert.equal(await writeReceiptPublicKey(dir, pem), 'written');
    assert.equal(
      await writeReceiptPublicKey(dir, pem.replace(/\n/g, '\r\n')),
      'unchanged',
      'the same key in other line breaks',
    );
    assert.ok(samePublicKey((await readReceiptPublicKey(dir))!, pem));
    const next = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    assert.equal(await writeReceiptPublicKey(dir, next), 'replaced');
    await writeFile(
      path.join(dir, 'receipt-public-key.pem'),
      await readFile(path.join(ceremony.dataDir, 'state', 'receipt-key.pem')),
    );
    await assert.rejects(readReceiptPublicKey(dir), (e: Error) => isCoordinatorError(e, 'receipt.key_unavailable'));
  });
});

describe('the public transcript, recomputed in the page’s module', () => {
  test('the same entries, hashes and chains as the coordinator’s transcript module', async () => {
    const text = await readFile(path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl'), 'utf8');
    const theirs = parseTranscript(text, ceremony.ceremonyId);
    const raw = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const ours = checkPublicTranscript(ceremony.ceremonyId, raw, 'the test');
    assert.equal(transcriptGenesisHash(ceremony.ceremonyId), genesisHash(ceremony.ceremonyId));
    assert.deepEqual(ours.entries, theirs);
    assert.equal(ours.finalised, true);
    const register = ours.chains.get('register')!;
    assert.deepEqual(
      register.contributions.map((e) => e.contributor),
      ['alice', 'bob'],
    );
    assert.equal(register.beacon?.index, 3);
  });

  test('a changed, dropped or foreign entry breaks it', async () => {
    const text = await readFile(path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl'), 'utf8');
    const raw = () =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const changed = raw();
    changed[3]!.contributor = 'mallory';
    rejectsWith(
      () => checkPublicTranscript(ceremony.ceremonyId, changed, 'the test'),
      'transcript.corrupt',
      /entry 3 whose hash does not match its contents/,
    );
    const dropped = raw();
    dropped.splice(2, 1);
    rejectsWith(
      () => checkPublicTranscript(ceremony.ceremonyId, dropped, 'the test'),
      'transcript.corrupt',
      /entry 2 numbered 3/,
    );
    rejectsWith(
      () => checkPublicTranscript('another-ceremony', raw(), 'the test'),
      'transcript.corrupt',
      /does not start from the genesis of ceremony "another-ceremony"/,
    );
    rejectsWith(
      () => checkPublicTranscript(ceremony.ceremonyId, { entries: [] }, 'the test'),
      'transcript.corrupt',
      /not a list of entries/,
    );
  });

  test('an entry after the finalised one (a second manifest) breaks it, though its hashes chain', async () => {
    const entries = (await readFile(path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const last = entries.at(-1)!;
    assert.equal(last.type, 'finalised');
    const { hash: _hash, ...rest } = last;
    const unsigned = { ...rest, seq: entries.length, prevHash: last.hash, manifestHash: 'cd'.repeat(64) };
    entries.push({ ...unsigned, hash: entryHash(unsigned as never) });
    rejectsWith(
      () => checkPublicTranscript(ceremony.ceremonyId, entries, 'the test'),
      'transcript.corrupt',
      new RegExp(`entry ${entries.length - 1} out of order: a finalised entry after the finalised entry`),
    );
  });
});
