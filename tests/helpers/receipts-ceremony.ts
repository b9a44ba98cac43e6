/**
 * A finalised ceremony with the receipts its coordinator would have signed: a private copy of the
 * cached finalised ceremony, the coordinator's receipt key created where `ceremony serve` keeps it
 * (state/receipt-key.pem, by the coordinator's own ReceiptSigner) with its public half written
 * beside the public files as the coordinator writes it at start-up, and one receipt per
 * contribution of the transcript, with the body the coordinator signs when it accepts one.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { copyCeremony, finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { parseTranscript } from '../../core/transcript/transcript.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { writeReceiptPublicKey } from '../../core/receipts/receipt-public-key-file.ts';
import { ReceiptSigner } from '../../server/contributions/receipt-signer.ts';
import { joined } from './joined-regex.ts';

export interface ReceiptJson {
  contributionId: string;
  body: string;
  signature: string;
}

export interface ReceiptsCeremony {
  dataDir: string;
  ceremonyId: string;
  signer: ReceiptSigner;
  /** Every receipt of `contributor`, as GET /api/me/receipts lists them. */
  receiptsOf(contributor: string): ReceiptJson[];
}

export async function receiptsCeremony(): Promise<ReceiptsCeremony> {
  const dataDir = await copyCeremony((await finalisedCeremony()).dataDir);
  const config = await loadCeremonyConfig(dataDir);
  const signer = await ReceiptSigner.fromKeyFile(path.join(dataDir, 'state', 'receipt-key.pem'));
  await writeReceiptPublicKey(dataDir, signer.publicKeyPem);
  const entries = parseTranscript(
    await readFile(path.join(dataDir, 'transcript', 'transcript.jsonl'), 'utf8'),
    config.id,
  );
  const receipts = entries.flatMap((entry) =>
    entry.type === 'contribution'
      ? [
          {
            contributor: entry.contributor,
            receipt: {
              contributionId: `contribution-${entry.seq}`,
              ...signer.sign({
                ceremony: config.id,
                circuit: entry.circuit,
                index: entry.index,
                contributor: entry.contributor,
                contributionHash: entry.contributionHash,
                fileHash: entry.fileHash,
                acceptedAt: entry.time,
              }),
            },
          },
        ]
      : [],
  );
  return {
    dataDir,
    ceremonyId: config.id,
    signer,
    receiptsOf: (contributor) => receipts.filter((r) => r.contributor === contributor).map((r) => r.receipt),
  };
}

/**
 * The line `ceremony verify-receipt` prints for alice's register receipt (she contributed second)
 * before finalisation, when it checks the head of the chain instead of a final key.
 */
export const ALICE_IN_OPEN_REGISTER_HEAD = joined(
  'm',
  /^register #1 \(alice\) ok: included in the current head of register \(contribution 2\) at position 1; /,
  /register is not finalised yet, so check again once it is$/,
);
