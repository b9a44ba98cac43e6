/**
 * `ceremony init`: checks every circuit against the configuration and the powers of tau, then
 * creates contribution 0 of each chain with snarkjs and records it in the transcript. All checks
 * run before anything is written; the transcript entries are written last, in one atomic step, so
 * an interrupted init leaves the folder uninitialised and can simply be run again.
 */
import { mkdir, rm } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { commitFile, tempPathFor } from '../fs/atomic-write.ts';
import { hashFile } from '../crypto/file-hash.ts';
import { hashKeyFile } from '../zkey/zkey-hashes.ts';
import { CoordinatorError } from '../errors.ts';
import { readR1csSummary, requiredPtauPower, type R1csSummary } from '../setup/r1cs-header.ts';
import { readPtauSummary } from '../ptau/ptau-header.ts';
import { readZkeyInfo } from '../zkey/zkey-file.ts';
import type { CircuitConfig, CeremonyConfig } from '../config/ceremony-config.ts';
import type { NewTranscriptEntry } from '../transcript/transcript.ts';
import { openCeremony } from './open-ceremony.ts';
import { withCeremonyLock } from '../data-folder/ceremony-lock.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { silentProgress, snarkjsProgressLogger, type Progress } from './progress.ts';
import { BN254_R } from '../crypto/bn254-moduli.ts';

export interface InitializedCircuit {
  circuit: string;
  constraints: number;
  publicInputs: number;
  circuitHash: string;
  fileHash: string;
}

/**
 * Checks every circuit and the ptau against the configuration (an r1cs whose hash ceremony.json
 * pins must have that hash); throws on the first problem.
 */
export async function checkCeremonyInputs(config: CeremonyConfig): Promise<Map<string, R1csSummary>> {
  const ptau = await readPtauSummary(config.ptauPath);
  if (!ptau.preparedForPhase2) {
    throw new CoordinatorError(
      'ptau.not_prepared',
      `${config.ptau} is not prepared for phase 2 (run \`snarkjs powersoftau prepare phase2\` on it)`,
    );
  }
  if (ptau.insecure && !config.testNetwork) {
    throw new CoordinatorError(
      'ptau.insecure',
      `${config.ptau} is a development powers of tau whose secret is public; ` +
        `it is refused for a ceremony not marked "testNetwork": true`,
    );
  }
  const summaries = new Map<string, R1csSummary>();
  for (const circuit of config.circuits) {
    if (circuit.r1csHash !== undefined) {
      const actual = await hashFile(circuit.r1csPath).catch(() => undefined);
      if (actual !== undefined && actual !== circuit.r1csHash) {
        throw new CoordinatorError(
          'r1cs.hash_mismatch',
          `circuit ${circuit.name}: ${circuit.r1cs} has BLAKE2b-512 ${actual}; ceremony.json pins ${circuit.r1csHash}`,
        );
      }
    }
    const summary = await readR1csSummary(circuit.r1csPath);
    if (summary.prime !== BN254_R)
      throw new CoordinatorError('r1cs.malformed', `circuit ${circuit.name}: ${circuit.r1cs} is not over bn128`);
    if (summary.publicInputs !== circuit.publicInputs) {
      throw new CoordinatorError(
        'circuit.public_inputs_mismatch',
        `circuit ${circuit.name}: ${circuit.r1cs} has ${summary.publicInputs} ` +
          `public inputs, the configuration says ${circuit.publicInputs}`,
      );
    }
    const needed = requiredPtauPower(summary);
    if (needed > ptau.power) {
      throw new CoordinatorError(
        'ptau.too_small',
        `circuit ${circuit.name} (${summary.nConstraints} constraints, ` +
          `${summary.publicInputs} public inputs) needs a powers of tau of power ` +
          `${needed}; ${config.ptau} has power ${ptau.power}`,
      );
    }
    summaries.set(circuit.name, summary);
  }
  return summaries;
}

async function createInitialKey(
  config: CeremonyConfig,
  circuit: CircuitConfig,
  target: string,
  progress: Progress,
): Promise<void> {
  const temp = tempPathFor(target);
  const errors: string[] = [];
  const logger = snarkjsProgressLogger(progress, circuit.name, errors);
  try {
    const result = await snarkjs.zKey.newZKey(circuit.r1csPath, config.ptauPath, temp, logger);
    if (result === -1 || errors.length > 0) {
      throw new CoordinatorError(
        'ptau.too_small',
        `snarkjs could not create the initial key of ${circuit.name}: ${errors.join('; ')}`,
      );
    }
    await commitFile(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
}

export async function initCeremony(
  dataDir: string,
  progress: Progress = silentProgress,
): Promise<InitializedCircuit[]> {
  return withCeremonyLock(ceremonyPaths(dataDir).lockPath, async () => {
    const state = await openCeremony(dataDir);
    if (state.transcript.entries.length > 0) {
      throw new CoordinatorError(
        'ceremony.already_initialised',
        `${state.config.dataDir} is already initialised (its transcript has ` +
          `${state.transcript.entries.length} entries); refusing to overwrite it`,
      );
    }
    const summaries = await checkCeremonyInputs(state.config);

    const results: InitializedCircuit[] = [];
    const entries: NewTranscriptEntry[] = [];
    for (const circuit of state.config.circuits) {
      progress({
        type: 'step',
        circuit: circuit.name,
        step: `creating contribution 0 (${summaries.get(circuit.name)!.nConstraints} constraints)`,
      });
      await mkdir(state.paths.chainDir(circuit.name), { recursive: true });
      const target = state.paths.zkeyPath(circuit.name, 0);
      await createInitialKey(state.config, circuit, target, progress);
      const info = await readZkeyInfo(target);
      const { fileHash, sectionHashes } = await hashKeyFile(target, `contribution 0 of ${circuit.name}`);
      const circuitHash = info.mpc.csHash.toString('hex');
      entries.push({ type: 'init', circuit: circuit.name, index: 0, circuitHash, fileHash, sectionHashes });
      results.push({
        circuit: circuit.name,
        constraints: summaries.get(circuit.name)!.nConstraints,
        publicInputs: info.header.nPublic,
        circuitHash,
        fileHash,
      });
      progress({ type: 'finished', circuit: circuit.name });
    }
    await state.transcript.append(entries);
    return results;
  });
}
