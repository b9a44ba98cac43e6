/**
 * alice's upload of register as the service sees it once handed in, for the tests of its verdicts: a
 * stand-in file (not a zkey) in the folder's uploads/ (a candidate anywhere else is another folder's,
 * a restored database's, and is settled as lost), its contribution row, and the lobby told.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ContributionStore } from '../../server/contributions/contribution-store.ts';
import type { Lobby } from '../../server/lobby/lobby.ts';

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
