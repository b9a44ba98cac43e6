/**
 * The benchmark chain of one size, cached under .fixture-cache/bench-verify-link-P/ (…-P-tK/ for
 * K terms per left factor): a generated circuit of 2^P multiplication constraints (12 public
 * inputs), the dev ptau it needs, contribution 0 (snarkjs zkey new) and two contributions on it.
 * Shared by the verification, server and contribution benches.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { devPtau, FIXTURE_CACHE } from '../tests/fixtures/ceremony-fixture.ts';
import { BENCH_PUBLIC_INPUTS, circuitName, generateMultiplicationCircuit } from './generate-circuit.ts';

export interface BenchChain {
  power: number;
  /** Terms per left factor of each constraint (1: the sparsest circuit). */
  terms: number;
  r1cs: string;
  ptau: string;
  z0: string;
  z1: string;
  z2: string;
}

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
const exists = (p: string): Promise<boolean> => stat(p).then(() => true, () => false);
export const benchLog = (message: string): void => void process.stderr.write(`… ${message}\n`);

/** The domain must hold the constraints plus one row per public input and the constant. */
export function ptauPowerFor(constraints: number): number {
  return Math.ceil(Math.log2(constraints + BENCH_PUBLIC_INPUTS + 1));
}

export async function benchChain(power: number, terms = 1): Promise<BenchChain> {
  const constraints = 2 ** power;
  const ptauPower = ptauPowerFor(constraints);
  benchLog(`dev ptau of power ${ptauPower} (cached)`);
  const ptau = await devPtau(ptauPower);
  const dir = path.join(FIXTURE_CACHE, terms === 1 ? `bench-verify-link-${power}` : `bench-verify-link-${power}-t${terms}`);
  await mkdir(dir, { recursive: true });
  const r1cs = path.join(dir, `${circuitName(constraints, terms)}.r1cs`);
  if (!(await exists(r1cs))) {
    benchLog(`compiling a circuit of ${constraints} constraints (${terms} term(s) per left factor)`);
    await generateMultiplicationCircuit(constraints, dir, terms);
  }
  const [z0, z1, z2] = ['z0', 'z1', 'z2'].map((name) => path.join(dir, `${name}.zkey`)) as [string, string, string];
  // Written in order, each after its predecessor; a missing last file means the chain is rebuilt from there.
  if (!(await exists(z0))) {
    benchLog('snarkjs zkey new');
    await snarkjs.zKey.newZKey(r1cs, ptau, z0, silent);
  }
  if (!(await exists(z1))) {
    benchLog('snarkjs zkey contribute (1)');
    await snarkjs.zKey.contribute(z0, z1, 'one', 'bench entropy one', silent);
  }
  if (!(await exists(z2))) {
    benchLog('snarkjs zkey contribute (2)');
    await snarkjs.zKey.contribute(z1, z2, 'two', 'bench entropy two', silent);
  }
  return { power, terms, r1cs, ptau, z0, z1, z2 };
}
