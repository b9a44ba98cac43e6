/**
 * For the tests of the service's verdicts: a dispatcher whose outcomes the test gives, and alice's
 * upload of register as the service sees it once handed in: a stand-in file (not a zkey) in the
 * folder's uploads/ (a candidate anywhere else is another folder's, a restored database's, and is
 * settled as lost), its contribution row, and the lobby told.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { CeremonyService, type CeremonyServiceDeps } from '../../server/ceremony-service.ts';
import type { Clock } from '../../server/clock.ts';
import { ContributionStore } from '../../server/contributions/contribution-store.ts';
import { ReceiptSigner } from '../../server/contributions/receipt-signer.ts';
import type { Db } from '../../server/store/database.ts';
import type { Lobby } from '../../server/lobby/lobby.ts';
import type { VerificationOutcome } from '../../core/verifier-contract/verifier-contract.ts';
import type { VerificationDispatcher } from '../../server/verification-dispatch/verification-dispatcher.ts';

/** A dispatcher that verifies nothing: the test answers each contribution with `answer`. */
function answeredDispatcher(): {
  dispatcher: VerificationDispatcher;
  answer(outcome: VerificationOutcome): void;
} {
  const listeners: Array<(outcome: VerificationOutcome) => void> = [];
  const dispatcher: VerificationDispatcher = {
    enqueue: async () => {},
    prepareHead: () => {},
    onOutcome: (listener) => void listeners.push(listener),
    close: async () => {},
  };
  return { dispatcher, answer: (outcome) => listeners.forEach((listener) => listener(outcome)) };
}

/**
 * A service on the lobby's database whose verifier the test answers (answeredDispatcher), its log
 * silent unless `more` says. The ceremony is only named (`dir`): the refusal paths read nothing of it on disk.
 */
export async function answeredService(
  dir: string,
  id: string,
  { lobby, db, clock }: { lobby: Lobby; db: Db; clock: Clock },
  more: Partial<CeremonyServiceDeps> = {},
): Promise<{ service: CeremonyService; contributions: ContributionStore; answer(outcome: VerificationOutcome): void }> {
  const contributions = new ContributionStore(db);
  const { dispatcher, answer } = answeredDispatcher();
  const service = new CeremonyService({
    config: { id, dataDir: dir } as CeremonyConfig,
    db,
    clock,
    lobby,
    contributions,
    dispatcher,
    receipts: await ReceiptSigner.fromKeyFile(path.join(dir, 'receipt-key.pem')),
    log: { info: () => {}, warn: () => {} },
    ...more,
  });
  return { service, contributions, answer };
}

/** alice's upload of register, handed in: its contribution row. */
export async function aliceHandsIn(
  dir: string,
  contributions: ContributionStore,
  lobby: Lobby,
  createdAt: number,
  file = 'candidate.zkey',
): Promise<ReturnType<ContributionStore['create']>> {
  await mkdir(path.join(dir, 'uploads'), { recursive: true });
  const candidatePath = path.join(dir, 'uploads', file);
  await writeFile(candidatePath, 'not a zkey');
  const row = contributions.create({
    circuit: 'register',
    contributorId: 'alice',
    contributorName: 'alice',
    headIndex: 0,
    candidatePath,
    size: 10,
    fileHash: 'ab'.repeat(32),
    createdAt,
  });
  lobby.markSubmitted('alice', 'register', row.id);
  return row;
}
