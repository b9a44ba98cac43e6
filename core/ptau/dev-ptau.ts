/**
 * Development powers of tau: a valid, snarkjs-compatible, phase-2-prepared ptau whose secret is
 * derived from a public beacon, for test networks, tests and benchmarks only. The file carries
 * INSECURE_PTAU_MARKER as its contribution name, and `ceremony init` refuses it unless the
 * ceremony is marked as a test network. Deterministic: the same power gives the same bytes, so
 * fixtures can be cached instead of committed.
 *
 * The file is written straight from the known secret: every point is a known scalar times a
 * generator (phase1-sections.ts: the powers and the beacon contribution record with its hashes;
 * lagrange-sections.ts: the phase-2 Lagrange sections), using one fixed-base multiplication per
 * point (fixed-base-times.ts). The bytes are exactly those of snarkjs's newAccumulator + beacon +
 * preparePhase2 on the same beacon (tests/ptau compares them), without preparePhase2's group FFTs
 * (hours at power 18). `createDevPtauWithSnarkjs` keeps that all-snarkjs path as the reference.
 */
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { commitFile } from '../fs/atomic-write.ts';
import { makeOwnedWorkFolder, removeDeadOwnersFolders, type OwnedWorkFolder } from '../fs/owned-work-folders.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { CoordinatorError } from '../errors.ts';
import { INSECURE_PTAU_MARKER } from './ptau-header.ts';
import { devPtauKey } from './dev-ptau-secret.ts';
import { firstChallengeHash, writePhase1Sections } from './phase1-sections.ts';
import { writeLagrangeSections } from './lagrange-sections.ts';
import { closeGeneratorTimes } from './fixed-base-times.ts';
import { silentProgress, type Progress } from '../ceremony/progress.ts';

/** The public beacon the development secret comes from. Public on purpose: the secret is known. */
const DEV_PTAU_BEACON = '0000000000000000000000000000000000000000000000000000000000000000';
const DEV_PTAU_BEACON_ITERATIONS_EXP = 10;
const MIN_DEV_PTAU_POWER = 1;
const MAX_DEV_PTAU_POWER = 22;

const PREPARED_SECTION_COUNT = 11;

/** The subject dev-ptau reports its progress under (it works on no circuit). */
const DEV_PTAU_PROGRESS_SUBJECT = 'ptau';
const step = (progress: Progress, what: string): void =>
  progress({ type: 'step', circuit: DEV_PTAU_PROGRESS_SUBJECT, step: what });

function requirePower(power: number): void {
  if (!Number.isInteger(power) || power < MIN_DEV_PTAU_POWER || power > MAX_DEV_PTAU_POWER) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--power must be an integer from ${MIN_DEV_PTAU_POWER} to ${MAX_DEV_PTAU_POWER}, got ${power}`,
    );
  }
}

/**
 * Makes the development ptau of `power` at `outPath` (temp file, then rename). About 3·2^(p+2) G1
 * and 3·2^p G2 fixed-base multiplications; power 18 takes a few minutes on two cores.
 */
export async function createDevPtau(
  power: number,
  outPath: string,
  progress: Progress = silentProgress,
): Promise<void> {
  requirePower(power);
  const work = await stagingFolder(outPath, progress);
  const temp = path.join(work.path, 'powers.ptau');
  const subject = DEV_PTAU_PROGRESS_SUBJECT;
  try {
    const curve = await getBn128();
    step(progress, `deriving the public secret (power ${power})`);
    const challengeHash = firstChallengeHash(curve, power);
    const key = devPtauKey(curve, DEV_PTAU_BEACON, DEV_PTAU_BEACON_ITERATIONS_EXP, challengeHash);
    const handle = await open(temp, 'w+');
    try {
      const head = Buffer.alloc(12);
      head.write('ptau', 0, 'latin1');
      head.writeUInt32LE(1, 4); // version
      head.writeUInt32LE(PREPARED_SECTION_COUNT, 8);
      await handle.write(head, 0, 12, 0);
      step(progress, 'writing the powers of tau');
      const end = await writePhase1Sections(handle, 12, curve, {
        power,
        key,
        challengeHash,
        contributionName: INSECURE_PTAU_MARKER,
        beaconHash: Buffer.from(DEV_PTAU_BEACON, 'hex'),
        beaconIterationsExp: DEV_PTAU_BEACON_ITERATIONS_EXP,
        onPoints: (part, done, total) => progress({ type: 'count', circuit: subject, part, done, total }),
      });
      step(progress, 'writing the phase 2 Lagrange sections');
      // Called before the 2^p points of power p: the 2^p - 1 points of the powers below are done.
      const lagrange = (section: number, p: number): void => {
        const lastPower = section === 12 ? power + 1 : power;
        progress({
          type: 'count',
          circuit: subject,
          part: `section ${section}`,
          done: 2 ** p - 1,
          total: 2 ** (lastPower + 1) - 1,
        });
      };
      await writeLagrangeSections(
        handle,
        end,
        curve,
        power,
        { tau: key.tau.prvKey, alpha: key.alpha.prvKey, beta: key.beta.prvKey },
        lagrange,
      );
    } finally {
      await handle.close();
    }
    await commitFile(temp, outPath);
    progress({ type: 'finished', circuit: subject });
  } finally {
    await closeGeneratorTimes();
    await work.done();
  }
}

/** The all-snarkjs path (newAccumulator + beacon + preparePhase2): minutes at 15, hours at 18. */
export async function createDevPtauWithSnarkjs(
  power: number,
  outPath: string,
  progress: Progress = silentProgress,
): Promise<void> {
  requirePower(power);
  const work = await stagingFolder(outPath, progress);
  const [empty, contributed, prepared] = ['empty', 'contributed', 'prepared'].map((name) =>
    path.join(work.path, `${name}.ptau`),
  ) as [string, string, string];
  try {
    const curve = await getBn128();
    step(progress, 'new accumulator');
    await snarkjs.powersOfTau.newAccumulator(curve, power, empty);
    step(progress, 'beacon');
    await snarkjs.powersOfTau.beacon(
      empty,
      contributed,
      INSECURE_PTAU_MARKER,
      DEV_PTAU_BEACON,
      DEV_PTAU_BEACON_ITERATIONS_EXP,
    );
    step(progress, 'preparing phase 2');
    await snarkjs.powersOfTau.preparePhase2(contributed, prepared);
    await commitFile(prepared, outPath);
    progress({ type: 'finished', circuit: DEV_PTAU_PROGRESS_SUBJECT });
  } finally {
    await work.done();
  }
}

/**
 * The folder beside `outPath` where the ptau is made, then renamed into place: a dev ptau of power 22
 * is 4.8 GB, and a run killed in its hour leaves what it wrote, which the next run to `outPath`
 * removes (its owner's lock is free, core/fs/owned-work-folders.ts).
 */
async function stagingFolder(outPath: string, progress: Progress): Promise<OwnedWorkFolder> {
  const dir = path.dirname(path.resolve(outPath));
  await mkdir(dir, { recursive: true });
  const prefix = `.${path.basename(outPath)}.making-`;
  const removed = await removeDeadOwnersFolders(dir, prefix);
  if (removed > 0) step(progress, `removed what ${removed} killed run${removed === 1 ? '' : 's'} left`);
  return makeOwnedWorkFolder(dir, prefix);
}
