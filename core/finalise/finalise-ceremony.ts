/**
 * `ceremony finalise`: applies the random beacon to the head of every chain, checks each final key
 * as the next link of its verified head (the beacon record must be exactly the announced beacon),
 * then writes the final keys, verification keys, Solidity verifiers and the delta manifest.
 *
 * The beacon is made in one pass, as a contributor's turn is (core/delta/one-pass-contribution.ts):
 * snarkjs's own `zkey beacon` on the head's small sections, then L and H scaled by the kernel on
 * every core and spliced with the head's other sections into the final key, hashed and summed as it
 * is written: the same bytes as snarkjs alone writes. The check is the link check every
 * contribution passed (core/link-check/verify-link-from-head.ts: structure, the beacon's proof of
 * knowledge and its derivation from the announced beacon, δ, and L and H by random linear
 * combination), not a re-verification from contribution 0: the head it extends was itself verified
 * as a link, so the chain from contribution 0 holds by induction (docs/link-check.md). The
 * combination is under the coordinator's secret circuit key, with the head's side from the
 * verifiers' cache when they left it (headChallenge) and the final key's side from the pass, else
 * with fresh scalars on both sides.
 *
 * Resumable: a circuit whose beacon entry is already in the transcript is not redone, so a crash
 * half-way is finished by running the same command again (with the same beacon).
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { commitFile, makeDirectory, removeTempLeftovers, tempPathFor, writeFileAtomic } from '../fs/atomic-write.ts';
import { hashBytes, hashFile } from '../crypto/file-hash.ts';
import { CoordinatorError } from '../errors.ts';
import { withCeremonyLock } from '../data-folder/ceremony-lock.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import {
  CHALLENGE_SEED_FILE,
  circuitChallengeKey,
  linkChallengeSeed,
  stateDirFor,
} from '../link-check/link-challenge.ts';
import { readCachedCombination, type LinkCombination } from '../link-check/link-combination-cache.ts';
import {
  openCeremony,
  refuseTooFewContributions,
  type CeremonyState,
  type CircuitChain,
} from '../ceremony/open-ceremony.ts';
import { finalBeacon, type FinalBeaconOptions } from './beacon-announcement.ts';
import { queueLogFinding } from '../audit/check-queue-fairness.ts';
import { queueLogBegun } from '../queue-log/queue-log-begun.ts';
import { pointsScaledProgress, silentProgress, type Progress } from '../ceremony/progress.ts';
import { contributeInOnePass, verifyOnePassLink } from '../delta/one-pass-contribution.ts';
import { beaconRecord } from '../kernel/contribute-fast.ts';
import { deltaEntryFromVerificationKey, serialiseManifest, type DeltaManifest } from '../manifest/delta-manifest.ts';
import { exportSolidityVerifier } from './solidity-verifier.ts';
import { writeVerifierCompilerRecord } from './verifier-compiler-record.ts';
import type { BeaconParameters } from './beacon-parameters.ts';
import { StageTimer } from '../runtime/stage-timings.ts';

export const FINAL_BEACON_NAME = 'Final beacon';

export interface FinalisedCircuit {
  circuit: string;
  verifier: string;
  contributions: number;
  contributionHash: string;
  fileHash: string;
}

export interface FinaliseResult {
  circuits: FinalisedCircuit[];
  manifest: DeltaManifest;
  manifestPath: string;
}

function checkReadyToFinalise(state: CeremonyState, beacon: BeaconParameters): void {
  if (state.finalised) throw new CoordinatorError('ceremony.finalised', 'the ceremony is already finalised');
  const chains = [...state.chains.values()];
  if (chains.some((chain) => !chain.head)) {
    throw new CoordinatorError(
      'ceremony.not_initialised',
      'the ceremony is not initialised; run `ceremony init` first',
    );
  }
  refuseTooFewContributions(state);
  for (const chain of chains) {
    if (
      chain.beacon &&
      (chain.beacon.beacon !== beacon.beaconHex || chain.beacon.iterationsExp !== beacon.iterationsExp)
    ) {
      throw new CoordinatorError(
        'finalise.beacon_mismatch',
        `${chain.circuit.name} was already finalised with beacon ` +
          `${chain.beacon.beacon} (2^${chain.beacon.iterationsExp}); finish with ` +
          `the same beacon`,
      );
    }
  }
}

/**
 * The coordinator's circuit key and the head's cached combination, when its verifiers left one
 * (they do for every head they accepted, and for contribution 0 when serve started): the final
 * key's check then sums only the final key's L and H, two MSMs instead of four. The entry is
 * authenticated under the key, so one of another file or circuit is never used. Without a
 * challenge seed (a folder whose state was not kept), or without an entry, the check sums both
 * sides; it never creates a seed.
 */
async function headChallenge(
  state: CeremonyState,
  chain: CircuitChain,
): Promise<{ key: Uint8Array; head: LinkCombination } | undefined> {
  const stateDir = stateDirFor(state.paths.dataDir);
  if (!chain.head || !existsSync(path.join(stateDir, CHALLENGE_SEED_FILE))) return undefined;
  const key = circuitChallengeKey(await linkChallengeSeed(stateDir), chain.circuit.name);
  const head = await readCachedCombination(stateDir, key, chain.head.fileHash);
  return head ? { key, head } : undefined;
}

async function applyBeacon(
  state: CeremonyState,
  chain: CircuitChain,
  beacon: BeaconParameters,
  progress: Progress,
  timer: StageTimer,
): Promise<string> {
  const name = chain.circuit.name;
  const finalPath = state.paths.finalZkeyPath(name);
  const staged = tempPathFor(finalPath);
  try {
    const headPath = state.paths.zkeyPath(name, chain.headIndex);
    const challenge = await headChallenge(state, chain);
    let made;
    try {
      timer.mark('beacon: record, then L and H scaled, spliced, hashed and summed as they are written');
      made = await contributeInOnePass({
        headPath,
        outPath: staged,
        makeRecord: (smallKey) => beaconRecord(smallKey, FINAL_BEACON_NAME, beacon.beaconHex, beacon.iterationsExp),
        ...(challenge ? { circuitKey: challenge.key } : {}),
        onScaled: pointsScaledProgress(progress, name),
      });
      timer.mark(undefined);
    } catch (error) {
      if (error instanceof Error && /refused the beacon/.test(error.message))
        throw new CoordinatorError('finalise.bad_beacon', `snarkjs refused the beacon for ${name}`);
      throw error;
    }
    progress({ type: 'step', circuit: name, step: 'verifying the final key as the next link of its head' });
    const checked = timer.now();
    try {
      await verifyOnePassLink(headPath, staged, made, {
        ...(challenge ? { challenge } : {}),
        ...(chain.head?.sectionHashes ? { headSectionHashes: chain.head.sectionHashes } : {}),
        expect: { kind: 'beacon', ...beacon },
        // The coordinator's console shows this message: roles, not the server's paths.
        labels: { prev: `the head of ${name}`, next: `the final key of ${name}` },
        // The key is this command's own: its sums may start with the structure check.
        sumsDuringStructureCheck: true,
      });
    } catch (error) {
      throw new CoordinatorError(
        'finalise.verification_failed',
        `the final key of ${name} failed verification: ${(error as Error).message}`,
      );
    }
    const sides = challenge ? "the head's side cached" : 'both sides summed';
    const own = made.sums ? ", the final key's sums taken as it was written" : '';
    timer.add(`link check from the head (${sides}${own})`, timer.now() - checked);
    const { fileHash, sectionHashes } = made;
    await commitFile(staged, finalPath);
    await state.transcript.append([
      {
        type: 'beacon',
        circuit: name,
        index: chain.headIndex + 1,
        contributionHash: made.contributionHash,
        fileHash,
        sectionHashes,
        beacon: beacon.beaconHex,
        iterationsExp: beacon.iterationsExp,
      },
    ]);
    return fileHash;
  } finally {
    await rm(staged, { force: true });
  }
}

/**
 * The audit's replay of the published queue log against the transcript (core/audit/check-queue-
 * fairness.ts), before any beacon is applied: a ceremony whose log does not account for its links (a
 * contribution made on the folder outside the queue, a log edited by hand) would fail its audit once
 * finalised, when nothing can be mended any more. A folder whose log never began (no coordinator
 * served it) has nothing to replay: the audit of it takes --no-queue-log. One whose log began, in the
 * file or the coordinator's database, must have the file (audit.queue_log_missing otherwise).
 */
async function refuseFailingQueueLog(state: CeremonyState): Promise<void> {
  const noQueueLog = (await queueLogBegun(state.config.dataDir)) === undefined;
  const finding = await queueLogFinding(state.config, { noQueueLog });
  if (finding.ok) return;
  throw new CoordinatorError(
    finding.code ?? 'audit.queue_log_mismatch',
    `the audit of this ceremony would fail on its queue log (${finding.summary}), so it is not finalised; ` +
      'nothing was changed. If its coordinator was stopped abruptly, start it once (it completes the log ' +
      'from its database) and finalise again',
  );
}

/**
 * Finalises with `beaconSource`: the beacon itself, or what finalBeacon needs to find it (the
 * announced block's hash, read over RPC, or the coordinator's value checked against the announcement).
 */
export async function finaliseCeremony(
  dataDir: string,
  beaconSource: BeaconParameters | FinalBeaconOptions,
  progress: Progress = silentProgress,
): Promise<FinaliseResult> {
  return withCeremonyLock(ceremonyPaths(dataDir).lockPath, async () => {
    let state = await openCeremony(dataDir);
    const beacon =
      'beaconHex' in beaconSource
        ? await finalBeacon(state, { beacon: beaconSource.beaconHex, iterations: beaconSource.iterationsExp })
        : await finalBeacon(state, beaconSource);
    checkReadyToFinalise(state, beacon);
    await refuseFailingQueueLog(state);
    await makeDirectory(state.paths.finalDir);
    // A finalise killed while it wrote a final key left it staged here, as large as the key.
    await removeTempLeftovers(state.paths.finalDir);

    // Final keys written (and hashed) by this run: not read again to compare with the transcript.
    const hashedNow = new Map<string, string>();
    const timers = new Map<string, StageTimer>();
    for (const chain of state.chains.values()) {
      if (chain.beacon) {
        progress({ type: 'step', circuit: chain.circuit.name, step: 'beacon already applied, keeping it' });
        continue;
      }
      progress({
        type: 'step',
        circuit: chain.circuit.name,
        step: `applying the beacon to contribution ${chain.headIndex}`,
      });
      const timer = new StageTimer(`finalise ${chain.circuit.name}`);
      timers.set(chain.circuit.name, timer);
      hashedNow.set(chain.circuit.name, await applyBeacon(state, chain, beacon, progress, timer));
    }

    state = await openCeremony(dataDir);
    const manifest: DeltaManifest = {};
    const verifierSourceHashes: Record<string, string> = {};
    const circuits: FinalisedCircuit[] = [];
    for (const chain of state.chains.values()) {
      const { name, verifier } = chain.circuit;
      const finalPath = state.paths.finalZkeyPath(name);
      if ((hashedNow.get(name) ?? (await hashFile(finalPath))) !== chain.beacon!.fileHash) {
        throw new CoordinatorError(
          'chain.file_hash_mismatch',
          `${finalPath} is not the final key the transcript records`,
        );
      }
      progress({ type: 'step', circuit: name, step: `exporting the verification key and ${verifier}.sol` });
      const timer = timers.get(name) ?? new StageTimer(`finalise ${name}`);
      const vkey = await timer.time('verification key exported', async () => {
        const exported = await snarkjs.zKey.exportVerificationKey(finalPath);
        await writeFileAtomic(state.paths.verificationKeyPath(name), `${JSON.stringify(exported, null, 1)}\n`);
        return exported;
      });
      await timer.time('Solidity verifier exported', async () => {
        const source = await exportSolidityVerifier(finalPath, verifier);
        await writeFileAtomic(state.paths.solidityVerifierPath(verifier), source);
        verifierSourceHashes[verifier] = hashBytes(source);
      });
      timer.report();
      manifest[verifier] = deltaEntryFromVerificationKey(vkey);
      circuits.push({
        circuit: name,
        verifier,
        contributions: chain.headIndex,
        contributionHash: chain.beacon!.contributionHash,
        fileHash: chain.beacon!.fileHash,
      });
      progress({ type: 'finished', circuit: name });
    }
    const compilerRecord = await writeVerifierCompilerRecord(state.paths.finalDir, Object.keys(manifest));
    await writeFileAtomic(state.paths.manifestPath, serialiseManifest(manifest));
    const manifestHash = hashBytes(await readFile(state.paths.manifestPath));
    // The files that say what the deployed verifiers must be, committed with the manifest: a check
    // that relies on them holds them to these hashes, so nobody can swap them after the fact.
    await state.transcript.append([
      { type: 'finalised', manifestHash, compilerRecordHash: hashBytes(compilerRecord), verifierSourceHashes },
    ]);
    return { circuits, manifest, manifestPath: state.paths.manifestPath };
  });
}
