/**
 * The benchmark chain of one size, cached under .fixture-cache/bench-verify-link-P/ (…-P-tK/ for
 * K terms per left factor): a generated circuit of 2^P multiplication constraints (12 public
 * inputs), the dev ptau it needs, contribution 0 and two contributions on it (buildChainKeys).
 * Shared by the verification, server and contribution benches.
 *
 * realShapedChain(name) is the same for circuits shaped like the ceremony's real ones (see
 * REAL_SHAPES), cached under bench-real-shaped-NAME/ with every file written to a temporary name
 * and renamed, so several processes may build or read them at once.
 *
 * Usage: tsx bench/bench-chain.ts [--r1cs-only] NAME...   (builds or finds the named real-shaped
 *        chains, e.g. rs18 rs17p64, and prints each as JSON; --r1cs-only: their r1cs paths only)
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as snarkjs from 'snarkjs';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { writeInitialKey } from '../core/ceremony/initial-key-writer.ts';
import { ComposePool } from '../core/kernel/compose-pool.ts';
import { contributeFast } from '../core/kernel/contribute-fast.ts';
import { writeRealShapedR1cs } from './real-shaped-r1cs.ts';
import { parseBenchArgs } from './bench-args.ts';
import { devPtau, FIXTURE_CACHE } from '../tests/fixtures/ceremony-fixture.ts';
import {
  BENCH_PUBLIC_INPUTS,
  circuitName,
  generateMultiplicationCircuit,
  generateRealShapedCircuit,
} from './generate-circuit.ts';

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
const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );
export const benchLog = (message: string): void => void process.stderr.write(`… ${message}\n`);

/** The domain must hold the constraints plus one row per public input and the constant. */
export function ptauPowerFor(constraints: number): number {
  return Math.ceil(Math.log2(constraints + BENCH_PUBLIC_INPUTS + 1));
}

/**
 * A chain's keys, each written to a temporary name and renamed; a key already there is kept (a
 * missing later one is built from it). Contribution 0 is made on the kernel (`ceremony init`'s
 * writer: byte for byte what `snarkjs zkey new` writes, as tests/core/initial-key.test.ts and the
 * coordinator bench check), the two contributions ("one", "two") with snarkjs's `zkey contribute`,
 * L and H scaled on the kernel (the key snarkjs writes for the same secret). At 2^14 that is about
 * 14 s of CPU against 66 s with snarkjs alone.
 */
async function buildChainKeys(
  label: string,
  r1cs: string,
  ptau: string,
  [z0, z1, z2]: readonly [string, string, string],
): Promise<void> {
  if (!(await exists(z0))) {
    benchLog(`contribution 0 of ${label} on the kernel (the bytes of snarkjs zkey new)`);
    const pool = await ComposePool.start();
    try {
      await writeAtomically(z0, (tmp) => writeInitialKey(r1cs, ptau, tmp, { pool }));
    } finally {
      await pool.close();
    }
  }
  for (const [from, to, name] of [
    [z0, z1, 'one'],
    [z1, z2, 'two'],
  ] as const) {
    if (await exists(to)) continue;
    benchLog(`contribution "${name}" to ${label} (snarkjs zkey contribute, L and H on the kernel)`);
    await writeAtomically(to, (tmp) => contributeFast(from, tmp, name, `bench entropy ${name}`, { logger: silent }));
  }
}

export async function benchChain(power: number, terms = 1): Promise<BenchChain> {
  const constraints = 2 ** power;
  const ptauPower = ptauPowerFor(constraints);
  benchLog(`dev ptau of power ${ptauPower} (cached)`);
  const ptau = await devPtau(ptauPower);
  const dir = path.join(
    FIXTURE_CACHE,
    terms === 1 ? `bench-verify-link-${power}` : `bench-verify-link-${power}-t${terms}`,
  );
  await mkdir(dir, { recursive: true });
  const r1cs = path.join(dir, `${circuitName(constraints, terms)}.r1cs`);
  if (!(await exists(r1cs))) {
    benchLog(`compiling a circuit of ${constraints} constraints (${terms} term(s) per left factor)`);
    await generateMultiplicationCircuit(constraints, dir, terms);
  }
  const [z0, z1, z2] = ['z0', 'z1', 'z2'].map((name) => path.join(dir, `${name}.zkey`)) as [string, string, string];
  await buildChainKeys(`2^${power}`, r1cs, ptau, [z0, z1, z2]);
  return { power, terms, r1cs, ptau, z0, z1, z2 };
}

/** Circuits shaped like the ceremony's: the largest ones of each kind it runs. */
export const REAL_SHAPES = {
  /** Domain 2^18: about 233,000 constraints, 12 public inputs. */
  rs18: { constraints: 233_000, publicInputs: 12 },
  /** Domain 2^17: 131,000 constraints, 64 public inputs (131,000 + 64 + 1 ≤ 131,072 rows). */
  rs17p64: { constraints: 131_000, publicInputs: 64 },
  /**
   * Domain 2^20: 1,000,000 constraints, 12 public inputs (a key of about 640 MB). Not one of the
   * service's circuits: the size where other ceremonies send contributors from the browser to a CLI.
   */
  rs20: { constraints: 1_000_000, publicInputs: 12 },
  /**
   * Domain 2^22: 4,194,000 constraints, 12 public inputs (a key of about 2.7 GiB): the 2^22 ceremony
   * of `npm run bench -- --only rs22`. Its r1cs is written directly (real-shaped-r1cs.ts), not
   * compiled: circom2 would take longer than the ceremony. Only its r1cs and ptau are cached.
   */
  rs22: { constraints: 4_194_000, publicInputs: 12 },
} as const;
/** The shapes whose r1cs is written directly rather than compiled with circom. */
const WRITTEN_DIRECTLY: ReadonlySet<string> = new Set(['rs22']);
export type RealShapeName = keyof typeof REAL_SHAPES;
export const REAL_SHAPE_NAMES = Object.keys(REAL_SHAPES) as RealShapeName[];

export interface RealShapedChain extends BenchChain {
  name: RealShapeName;
  constraints: number;
  publicInputs: number;
}

/**
 * The ptau the real-shaped chains up to 2^18 share (a larger ptau serves a smaller domain); a
 * larger chain has its own.
 */
export const REAL_SHAPED_PTAU_POWER = 18;

export function isRealShapeName(name: string): name is RealShapeName {
  return Object.hasOwn(REAL_SHAPES, name);
}

/** Runs `write(tmp)` and renames tmp to target: readers never see a half-written file. */
export async function writeAtomically(target: string, write: (tmp: string) => Promise<unknown>): Promise<void> {
  const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await write(tmp);
    await rename(tmp, target);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** The compiled r1cs of a real-shaped circuit (cached; needs no ptau). */
export async function realShapedR1cs(name: string): Promise<string> {
  if (!isRealShapeName(name))
    throw new Error(`unknown real-shaped circuit "${name}" (known: ${REAL_SHAPE_NAMES.join(', ')})`);
  const { constraints, publicInputs } = REAL_SHAPES[name];
  const dir = path.join(FIXTURE_CACHE, `bench-real-shaped-${name}`);
  await mkdir(dir, { recursive: true });
  const r1cs = path.join(dir, `${name}.r1cs`);
  if (!(await exists(r1cs))) {
    if (WRITTEN_DIRECTLY.has(name)) {
      benchLog(`writing ${name}'s r1cs: ${constraints} constraints, ${publicInputs} public inputs`);
      await writeAtomically(r1cs, (tmp) => writeRealShapedR1cs(tmp, constraints, publicInputs));
      return r1cs;
    }
    benchLog(`compiling ${name}: ${constraints} constraints, ${publicInputs} public inputs`);
    await writeAtomically(r1cs, async (tmp) => {
      // circom names its output after the source, so it compiles in a private folder.
      const work = `${tmp}.d`;
      try {
        await rename(await generateRealShapedCircuit(name, constraints, publicInputs, work), tmp);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    });
  }
  return r1cs;
}

export async function realShapedChain(name: string): Promise<RealShapedChain> {
  const r1cs = await realShapedR1cs(name);
  const shape = name as RealShapeName;
  const { constraints, publicInputs } = REAL_SHAPES[shape];
  const power = Math.ceil(Math.log2(constraints + publicInputs + 1));
  const ptauPower = Math.max(power, REAL_SHAPED_PTAU_POWER);
  benchLog(`dev ptau of power ${ptauPower} (cached)`);
  const ptau = await devPtau(ptauPower);
  const dir = path.dirname(r1cs);
  const [z0, z1, z2] = ['z0', 'z1', 'z2'].map((file) => path.join(dir, `${file}.zkey`)) as [string, string, string];
  await buildChainKeys(name, r1cs, ptau, [z0, z1, z2]);
  return { name: shape, power, terms: 4, constraints, publicInputs, r1cs, ptau, z0, z1, z2 };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values, positionals: names } = parseBenchArgs(import.meta.url, {
    options: { 'r1cs-only': { type: 'boolean', default: false } },
    allowPositionals: true,
  });
  for (const name of names) {
    if (values['r1cs-only']) process.stdout.write(`${await realShapedR1cs(name)}\n`);
    else process.stdout.write(`${JSON.stringify(await realShapedChain(name))}\n`);
  }
  // snarkjs's curve keeps its worker threads (and so this process) alive until released.
  await releaseBn128();
}
