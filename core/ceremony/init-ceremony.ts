/**
 * `ceremony init`: checks every circuit against the configuration and the powers of tau, then
 * creates contribution 0 of each chain on the kernel (initial-key-writer.ts: byte for byte what
 * snarkjs's `zkey new` writes, on every core, streamed to a temporary file renamed into place) and
 * records it in the transcript. Small circuits are made several at once, sharing the kernel's
 * threads, so that none of them waits on another's reads and writes; a large one is made alone, to
 * bound memory. Where the kernel's threads cannot start, snarkjs makes the keys (the same bytes,
 * slower). All checks run before anything is written; the transcript entries are written last, in
 * one atomic step, so an interrupted init leaves the folder uninitialised and can simply be run again.
 */
import { rm } from 'node:fs/promises';
import { commitFile, makeDirectory, removeTempLeftovers, tempPathFor } from '../fs/atomic-write.ts';
import { hashFile } from '../crypto/file-hash.ts';
import { hashKeyFile, type KeyHashes } from '../zkey/zkey-hashes.ts';
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
import { ComposePool } from '../kernel/compose-pool.ts';
import { writeInitialKey } from './initial-key-writer.ts';
import { StageTimer } from '../runtime/stage-timings.ts';

/** Circuits whose domain is at least this large are made one at a time (their accumulators take hundreds of MB). */
const ALONE_FROM_DOMAIN = 1 << 19;

export interface InitializedCircuit {
  circuit: string;
  constraints: number;
  publicInputs: number;
  circuitHash: string;
  fileHash: string;
}

/**
 * Checks every circuit and the ptau against the configuration (an r1cs or a ptau whose hash
 * ceremony.json pins must have that hash); throws on the first problem. `known.ptauHash` is the
 * ptau's BLAKE2b-512 when the caller has it already (the audit), so a pinned ptau is not hashed twice.
 */
export async function checkCeremonyInputs(
  config: CeremonyConfig,
  known: { ptauHash?: string } = {},
): Promise<Map<string, R1csSummary>> {
  if (config.ptauHash !== undefined) {
    const actual = known.ptauHash ?? (await hashFile(config.ptauPath).catch(() => undefined));
    if (actual !== undefined && actual !== config.ptauHash)
      throw new CoordinatorError(
        'ptau.hash_mismatch',
        `${config.ptau} has BLAKE2b-512 ${actual}; ceremony.json pins ${config.ptauHash}`,
      );
  }
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

/** snarkjs's `zkey new`, where the kernel's threads cannot start. */
async function createInitialKeyWithSnarkjs(
  config: CeremonyConfig,
  circuit: CircuitConfig,
  target: string,
  progress: Progress,
): Promise<void> {
  const temp = tempPathFor(target);
  const errors: string[] = [];
  const logger = snarkjsProgressLogger(progress, circuit.name, errors);
  // Loaded only here: snarkjs costs the kernel's path memory it does not use.
  const snarkjs = await import('snarkjs');
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

/** Contribution 0 of `circuit` at `target` (temporary file, then rename): on the kernel's pool, or snarkjs's. */
async function createInitialKey(
  config: CeremonyConfig,
  circuit: CircuitConfig,
  target: string,
  pool: ComposePool | undefined,
  progress: Progress,
): Promise<KeyHashes | undefined> {
  if (!pool) {
    await createInitialKeyWithSnarkjs(config, circuit, target, progress);
    return undefined;
  }
  const temp = tempPathFor(target);
  try {
    const written = await writeInitialKey(circuit.r1csPath, config.ptauPath, temp, {
      pool,
      r1csLabel: `circuit ${circuit.name}: ${circuit.r1cs}`,
      timer: new StageTimer(`init ${circuit.name}`),
      onProgress: (part, done, total) => progress({ type: 'count', circuit: circuit.name, part, done, total }),
    });
    await commitFile(temp, target);
    const sectionHashes = Object.fromEntries([...written.sectionHashes].map(([id, hash]) => [String(id), hash]));
    return { fileHash: written.fileHash, sectionHashes };
  } finally {
    await rm(temp, { force: true });
  }
}

/** Runs `work` on every item, at most `limit` at once, an item marked `alone` with nothing beside it. */
async function runSeveralAtOnce<T>(
  items: readonly T[],
  limit: number,
  alone: (item: T) => boolean,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: unknown;
  for (const item of items) {
    const solo = alone(item);
    while (running.size > 0 && (solo || running.size >= limit)) await Promise.race(running);
    if (failure !== undefined) break;
    const task: Promise<void> = work(item).then(
      () => void running.delete(task),
      (error: unknown) => {
        running.delete(task);
        failure ??= error;
      },
    );
    running.add(task);
    if (solo) await task;
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure;
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
    const timer = new StageTimer('init');
    const summaries = await timer.time('inputs checked (ptau and r1cs headers)', () =>
      checkCeremonyInputs(state.config),
    );

    const made = new Map<string, { entry: NewTranscriptEntry; result: InitializedCircuit }>();
    const pool = await timer.time('compose threads started', () => ComposePool.start().catch(() => undefined));
    try {
      const domainOf = (circuit: CircuitConfig): number => 2 ** requiredPtauPower(summaries.get(circuit.name)!);
      await runSeveralAtOnce(
        state.config.circuits,
        pool?.threads ?? 1,
        (circuit) => domainOf(circuit) >= ALONE_FROM_DOMAIN,
        async (circuit) => {
          progress({
            type: 'step',
            circuit: circuit.name,
            step: `creating contribution 0 (${summaries.get(circuit.name)!.nConstraints} constraints)`,
          });
          await makeDirectory(state.paths.chainDir(circuit.name));
          // An init killed while it wrote contribution 0 left it staged here, as large as the key.
          await removeTempLeftovers(state.paths.chainDir(circuit.name));
          const target = state.paths.zkeyPath(circuit.name, 0);
          const written = await createInitialKey(state.config, circuit, target, pool, progress);
          const info = await readZkeyInfo(target);
          // The kernel's writer hashed the file and each section as it wrote them; snarkjs's key is read once more.
          const { fileHash, sectionHashes } =
            written ?? (await hashKeyFile(target, `contribution 0 of ${circuit.name}`));
          const circuitHash = info.mpc.csHash.toString('hex');
          made.set(circuit.name, {
            entry: { type: 'init', circuit: circuit.name, index: 0, circuitHash, fileHash, sectionHashes },
            result: {
              circuit: circuit.name,
              constraints: summaries.get(circuit.name)!.nConstraints,
              publicInputs: info.header.nPublic,
              circuitHash,
              fileHash,
            },
          });
          progress({ type: 'finished', circuit: circuit.name });
        },
      );
    } finally {
      await pool?.close();
    }
    // In the configuration's order, whatever order the circuits finished in.
    const entries = state.config.circuits.map((circuit) => made.get(circuit.name)!.entry);
    await timer.time('transcript appended', () => state.transcript.append(entries));
    timer.report();
    return state.config.circuits.map((circuit) => made.get(circuit.name)!.result);
  });
}
