/**
 * Development powers of tau: a valid, snarkjs-compatible, phase-2-prepared ptau whose secret is
 * derived from a public beacon, for test networks, tests and benchmarks only. The file carries
 * INSECURE_PTAU_MARKER as its contribution name, and `ceremony init` refuses it unless the
 * ceremony is marked as a test network. Deterministic: the same power gives the same bytes, so
 * fixtures can be cached instead of committed.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { commitFile, tempPathFor } from '../fs/atomic-write.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { CoordinatorError } from '../errors.ts';
import { INSECURE_PTAU_MARKER } from './ptau-header.ts';

/** The public beacon the development secret comes from. Public on purpose: the secret is known. */
export const DEV_PTAU_BEACON = '0000000000000000000000000000000000000000000000000000000000000000';
const DEV_PTAU_BEACON_ITERATIONS_EXP = 10;
export const MIN_DEV_PTAU_POWER = 1;
export const MAX_DEV_PTAU_POWER = 20;

export interface DevPtauProgress {
  (step: 'accumulator' | 'beacon' | 'prepare', done: boolean): void;
}

export async function createDevPtau(power: number, outPath: string, onProgress?: DevPtauProgress): Promise<void> {
  if (!Number.isInteger(power) || power < MIN_DEV_PTAU_POWER || power > MAX_DEV_PTAU_POWER) {
    throw new CoordinatorError('usage.invalid_arguments', `--power must be an integer from ${MIN_DEV_PTAU_POWER} to ${MAX_DEV_PTAU_POWER}, got ${power}`);
  }
  await mkdir(path.dirname(path.resolve(outPath)), { recursive: true });
  const empty = tempPathFor(outPath);
  const contributed = tempPathFor(outPath);
  const prepared = tempPathFor(outPath);
  try {
    const curve = await getBn128();
    onProgress?.('accumulator', false);
    await snarkjs.powersOfTau.newAccumulator(curve, power, empty);
    onProgress?.('accumulator', true);
    onProgress?.('beacon', false);
    await snarkjs.powersOfTau.beacon(empty, contributed, INSECURE_PTAU_MARKER, DEV_PTAU_BEACON, DEV_PTAU_BEACON_ITERATIONS_EXP);
    onProgress?.('beacon', true);
    onProgress?.('prepare', false);
    await snarkjs.powersOfTau.preparePhase2(contributed, prepared);
    onProgress?.('prepare', true);
    await commitFile(prepared, outPath);
  } finally {
    await Promise.all([empty, contributed, prepared].map((file) => rm(file, { force: true })));
  }
}
