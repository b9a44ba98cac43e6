/**
 * `ceremony finalise`: applies the random beacon to the head of every chain, checks each final key
 * as a link (the beacon record must be exactly the announced beacon) and against contribution 0,
 * then writes the final keys, verification keys, Solidity verifiers and the delta manifest.
 *
 * Resumable: a circuit whose beacon entry is already in the transcript is not redone, so a crash
 * half-way is finished by running the same command again (with the same beacon).
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import * as snarkjs from 'snarkjs';
import { commitFile, tempPathFor, writeFileAtomic } from '../fs/atomic-write.ts';
import { hashFile } from '../crypto/file-hash.ts';
import { hashKeyFile } from '../zkey/zkey-hashes.ts';
import { CoordinatorError } from '../errors.ts';
import { withCeremonyLock } from '../data-folder/ceremony-lock.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { verifyLinkFromInit } from '../link-check/verify-link-from-init.ts';
import { openCeremony, type CeremonyState, type CircuitChain } from '../ceremony/open-ceremony.ts';
import { silentProgress, snarkjsProgressLogger, type Progress } from '../ceremony/progress.ts';
import { deltaEntryFromVerificationKey, serialiseManifest, type DeltaManifest } from '../manifest/delta-manifest.ts';
import { exportSolidityVerifier } from './solidity-verifier.ts';
import { writeVerifierCompilerRecord } from './verifier-compiler-record.ts';
import type { BeaconParameters } from './beacon-parameters.ts';

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

/**
 * Refuses (`finalise.too_few_contributions`) while a chain not yet sealed has fewer contributions
 * than ceremony.json's minContributions (at least 1: a key with no contribution is secret to no
 * one, its δ coming from the public beacon alone). The coordinator's finalise route asks this
 * before it starts, so the refusal comes before the ceremony enters `finalising`.
 */
export function refuseTooFewContributions(state: CeremonyState): void {
  const minimum = state.config.minContributions;
  const short = [...state.chains.values()].filter((chain) => !chain.beacon && chain.head && chain.headIndex < minimum);
  if (short.length > 0) {
    throw new CoordinatorError(
      'finalise.too_few_contributions',
      `ceremony.json requires at least ${minimum} contribution${minimum === 1 ? '' : 's'} ` +
        'per circuit before finalising; ' +
        `too few for: ${short.map((chain) => `${chain.circuit.name} (${chain.headIndex})`).join(', ')}` +
        (minimum === 1 ? '; a key with no contribution is not secret to anyone' : ''),
    );
  }
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

async function applyBeacon(
  state: CeremonyState,
  chain: CircuitChain,
  beacon: BeaconParameters,
  progress: Progress,
): Promise<void> {
  const name = chain.circuit.name;
  const finalPath = state.paths.finalZkeyPath(name);
  const staged = tempPathFor(finalPath);
  try {
    const headPath = state.paths.zkeyPath(name, chain.headIndex);
    const made = await snarkjs.zKey.beacon(
      headPath,
      staged,
      FINAL_BEACON_NAME,
      beacon.beaconHex,
      beacon.iterationsExp,
      snarkjsProgressLogger(progress, name),
    );
    if (made === false) throw new CoordinatorError('finalise.bad_beacon', `snarkjs refused the beacon for ${name}`);
    progress({ type: 'step', circuit: name, step: 'verifying the final key' });
    let link;
    try {
      link = await verifyLinkFromInit({
        initZkeyPath: state.paths.zkeyPath(name, 0),
        ptauPath: state.config.ptauPath,
        headZkeyPath: headPath,
        candidatePath: staged,
        expect: { kind: 'beacon', ...beacon },
        // The coordinator's console shows this message: roles, not the server's paths.
        labels: { head: `the head of ${name}`, candidate: `the final key of ${name}` },
        progress: { to: progress, circuit: name },
      });
    } catch (error) {
      throw new CoordinatorError(
        'finalise.verification_failed',
        `the final key of ${name} failed verification: ${(error as Error).message}`,
      );
    }
    const { fileHash, sectionHashes } = await hashKeyFile(staged, `the final key of ${name}`);
    await commitFile(staged, finalPath);
    await state.transcript.append([
      {
        type: 'beacon',
        circuit: name,
        index: chain.headIndex + 1,
        contributionHash: link.contributionHash,
        fileHash,
        sectionHashes,
        beacon: beacon.beaconHex,
        iterationsExp: beacon.iterationsExp,
      },
    ]);
  } finally {
    await rm(staged, { force: true });
  }
}

export async function finaliseCeremony(
  dataDir: string,
  beacon: BeaconParameters,
  progress: Progress = silentProgress,
): Promise<FinaliseResult> {
  return withCeremonyLock(ceremonyPaths(dataDir).lockPath, async () => {
    let state = await openCeremony(dataDir);
    checkReadyToFinalise(state, beacon);
    await mkdir(state.paths.finalDir, { recursive: true });

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
      await applyBeacon(state, chain, beacon, progress);
    }

    state = await openCeremony(dataDir);
    const manifest: DeltaManifest = {};
    const circuits: FinalisedCircuit[] = [];
    for (const chain of state.chains.values()) {
      const { name, verifier } = chain.circuit;
      const finalPath = state.paths.finalZkeyPath(name);
      if ((await hashFile(finalPath)) !== chain.beacon!.fileHash) {
        throw new CoordinatorError(
          'chain.file_hash_mismatch',
          `${finalPath} is not the final key the transcript records`,
        );
      }
      progress({ type: 'step', circuit: name, step: `exporting the verification key and ${verifier}.sol` });
      const vkey = await snarkjs.zKey.exportVerificationKey(finalPath);
      await writeFileAtomic(state.paths.verificationKeyPath(name), `${JSON.stringify(vkey, null, 1)}\n`);
      await writeFileAtomic(
        state.paths.solidityVerifierPath(verifier),
        await exportSolidityVerifier(finalPath, verifier),
      );
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
    await writeVerifierCompilerRecord(state.paths.finalDir, Object.keys(manifest));
    await writeFileAtomic(state.paths.manifestPath, serialiseManifest(manifest));
    const manifestHash = createHash('blake2b512')
      .update(await readFile(state.paths.manifestPath))
      .digest('hex');
    await state.transcript.append([{ type: 'finalised', manifestHash }]);
    return { circuits, manifest, manifestPath: state.paths.manifestPath };
  });
}
