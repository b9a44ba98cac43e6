/**
 * How close `ceremony verify-link` (verifyLink) comes to its floor, and what it saves over snarkjs.
 * On one chain link (contribution 2 on contribution 1) of a generated circuit of 2^P multiplication
 * constraints it times:
 *  - verifyLink(z1, z2)                          (no r1cs, no ptau)
 *  - snarkjs zKey.verifyFromInit(z0, ptau, z2)   (what `ceremony verify` runs)
 *  - npx snarkjs zkey verify r1cs ptau z2        (rebuilds the key from r1cs + ptau)
 *  - the MSM floor: two multiExpAffine over |L|+|H| points with LINK_SCALAR_BYTES scalars
 * and prints a table with each time as a multiple of verifyLink's. Fixtures (ptau of power P+1,
 * circuit, z0..z2) are cached under .fixture-cache/.
 *
 * Usage: tsx bench/verify-link.ts [--power P (10..18, default 14)] [--terms K (default 1)] [--runs N (default 3)]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import * as snarkjs from 'snarkjs';
import { getBn128, releaseBn128 } from '../core/crypto/bn128.ts';
import { LINK_SCALAR_BYTES, verifyLink } from '../core/verify/verify-link.ts';
import { verifyContribution } from '../core/verify/verify-contribution.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

silenceSnarkjsHandleWarnings();
import { readZkeyInfo, SECTION, type ZkeyInfo } from '../core/zkey/zkey-file.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { benchChain, benchLog as log } from './bench-chain.ts';

const { values } = parseArgs({ options: { power: { type: 'string', default: '14' }, terms: { type: 'string', default: '1' }, runs: { type: 'string', default: '3' } } });
const power = Number(values.power);
const terms = Number(values.terms);
const runs = Number(values.runs);
if (!Number.isInteger(power) || power < 10 || power > 18) throw new Error(`--power must be an integer from 10 to 18, got ${values.power}`);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

async function median(work: () => Promise<unknown>, times: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push((await timed(work)).ms);
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

async function readLAndH(info: ZkeyInfo): Promise<Uint8Array> {
  const l = info.sections.get(SECTION.l)!;
  const h = info.sections.get(SECTION.h)!;
  const bytes = new Uint8Array(l.size + h.size);
  const file = await open(info.path, 'r');
  try {
    await file.read(bytes, 0, l.size, l.offset);
    await file.read(bytes, l.size, h.size, h.offset);
  } finally {
    await file.close();
  }
  return bytes;
}

function runSnarkjsCli(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['snarkjs', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}

const { r1cs, ptau, z0, z1, z2 } = await benchChain(power, terms);
const [prev, next] = await Promise.all([readZkeyInfo(z1), readZkeyInfo(z2)]);
const points = (prev.sections.get(SECTION.l)!.size + prev.sections.get(SECTION.h)!.size) / 64;
const curve = await getBn128();

log('MSM floor');
const [prevBases, nextBases] = await Promise.all([readLAndH(prev), readLAndH(next)]);
const floorMs = await median(async () => {
  const scalars = new Uint8Array(randomBytes(points * LINK_SCALAR_BYTES));
  await Promise.all([curve.G1.multiExpAffine(prevBases, scalars), curve.G1.multiExpAffine(nextBases, scalars)]);
}, runs);

log('verifyLink');
await verifyLink(z1, z2); // warm-up: curve and worker start-up are not part of the check
const linkMs = await median(() => verifyLink(z1, z2), runs);

log('snarkjs zKey.verifyFromInit');
const fromInit = await timed(() => snarkjs.zKey.verifyFromInit(z0, ptau, z2, silent));
if (fromInit.value !== true) throw new Error('snarkjs verifyFromInit refused the benchmark key');

log('verifyContribution (ceremony verify: structure + verifyFromInit)');
const ceremonyVerify = await timed(() => verifyContribution({ initZkeyPath: z0, ptauPath: ptau, headZkeyPath: z1, candidatePath: z2 }));

log('npx snarkjs zkey verify (r1cs + ptau)');
const cli = await timed(() => runSnarkjsCli(['zkey', 'verify', r1cs, ptau, z2]));
if (cli.value !== 0) throw new Error(`npx snarkjs zkey verify exited with ${cli.value}`);

const rows: Array<[string, number]> = [
  [`MSM floor (2 × ${points} points, ${LINK_SCALAR_BYTES * 8}-bit scalars)`, floorMs],
  ['verifyLink (ceremony verify-link)', linkMs],
  ['snarkjs zKey.verifyFromInit', fromInit.ms],
  ['ceremony verify (verifyContribution)', ceremonyVerify.ms],
  ['npx snarkjs zkey verify (r1cs + ptau)', cli.ms],
];
const width = Math.max(...rows.map(([name]) => name.length));
process.stdout.write(
  `circuit: 2^${power} constraints (${terms} term(s) per left factor), ${prev.header.nVars} variables, |L| = ${prev.sections.get(SECTION.l)!.size / 64}, ` +
    `|H| = ${prev.header.domainSize}; median of ${runs} for the first two rows, 1 run for the others\n`,
);
process.stdout.write(`${'check'.padEnd(width)}  ${'time (ms)'.padStart(10)}  ${'÷ verifyLink'.padStart(12)}\n`);
for (const [name, ms] of rows) {
  process.stdout.write(`${name.padEnd(width)}  ${ms.toFixed(0).padStart(10)}  ${(ms / linkMs).toFixed(2).padStart(12)}\n`);
}
process.stdout.write(
  `ratios against snarkjs's CLI (same run): ceremony verify ${(cli.ms / ceremonyVerify.ms).toFixed(1)}× faster, ` +
    `verify-link ${(cli.ms / linkMs).toFixed(1)}× faster; verify-link vs verifyFromInit ${(fromInit.ms / linkMs).toFixed(1)}×\n`,
);
await releaseBn128();
