/**
 * How close link verification comes to its floor, and what it saves over snarkjs. On one chain
 * link (contribution 2 on contribution 1) of a generated circuit of 2^P multiplication
 * constraints (--power, --terms) or of a circuit shaped like the ceremony's (--circuit rs18 or
 * rs17p64, see bench-chain.ts), it times in one run:
 *  - the MSM over |L|+|H| points, the kernel's (g1MultiExp, what verify-link runs) next to
 *    ffjavascript's multiExpAffine, with LINK_SCALAR_BYTES scalars and with 253-bit ones (the
 *    audit's); the floor is the kernel's: one MSM, and two (what a link costs without a cached head)
 *  - `ceremony verify-link prev next`, the real CLI process (start-up, curve, two MSMs)
 *  - verifyLinkFromHead in a warm process (curve built): two MSMs with fresh scalars, as the CLI does; and
 *    with the coordinator's circuit key and the head's combination cached, one MSM, as the
 *    coordinator's verifiers do from the second link of a chain on
 *  - snarkjs zKey.verifyFromInit(z0, ptau, z2) (what p0tion runs), and verifyLinkFromInit
 *  - npx snarkjs zkey verify r1cs ptau z2 (rebuilds the key from r1cs + ptau)
 * and prints a table with each time as a multiple of the warm two-MSM verifyLinkFromHead's, then ratios.
 * Fixtures are cached under CEREMONY_FIXTURE_CACHE.
 *
 * Usage: tsx bench/verify-link.ts [--power P (10..18, default 14)] [--terms K (default 1)]
 *                                 [--circuit rs18|rs17p64] [--runs N (default 3)]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { getBn128, releaseBn128 } from '../core/crypto/bn128.ts';
import { closeMultiExp, g1MultiExp } from '../core/kernel/multi-exp.ts';
import { LINK_SCALAR_BYTES, verifyLinkFromHead } from '../core/link-check/verify-link-from-head.ts';
import { circuitChallengeKey } from '../core/link-check/link-challenge.ts';
import { verifyLinkFromInit } from '../core/link-check/verify-link-from-init.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

silenceSnarkjsHandleWarnings();
import { readZkeyInfo, SECTION, type ZkeyInfo } from '../core/zkey/zkey-file.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import {
  benchChain,
  benchLog as log,
  isRealShapeName,
  REAL_SHAPE_NAMES,
  realShapedChain,
  type BenchChain,
} from './bench-chain.ts';
import { parseBenchArgs } from './bench-args.ts';

const { values } = parseBenchArgs(import.meta.url, {
  options: {
    power: { type: 'string', default: '14' },
    terms: { type: 'string', default: '1' },
    circuit: { type: 'string' },
    runs: { type: 'string', default: '3' },
  },
});
const power = Number(values.power);
const terms = Number(values.terms);
const runs = Number(values.runs);
if (values.circuit === undefined && (!Number.isInteger(power) || power < 10 || power > 18))
  throw new Error(`--power must be an integer from 10 to 18, got ${values.power}`);
if (values.circuit !== undefined && !isRealShapeName(values.circuit))
  throw new Error(`--circuit must be one of ${REAL_SHAPE_NAMES.join(', ')}, got ${values.circuit}`);
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

function runProcess(command: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}
const runSnarkjsCli = (args: string[]): Promise<number> => runProcess('npx', ['snarkjs', ...args]);
/** The real `ceremony verify-link`, as an auditor runs it: a fresh process each time. */
async function runVerifyLinkCli(prev: string, next: string): Promise<void> {
  const code = await runProcess(process.execPath, [
    path.join(REPO_ROOT, 'bin', 'ceremony.js'),
    'verify-link',
    prev,
    next,
  ]);
  if (code !== 0) throw new Error(`ceremony verify-link exited with ${code}`);
}

const chain: BenchChain =
  values.circuit !== undefined ? await realShapedChain(values.circuit) : await benchChain(power, terms);
const { r1cs, ptau, z0, z1, z2 } = chain;
const [prev, next] = await Promise.all([readZkeyInfo(z1), readZkeyInfo(z2)]);
const points = (prev.sections.get(SECTION.l)!.size + prev.sections.get(SECTION.h)!.size) / 64;
const curve = await getBn128();

log('MSM floor');
const [prevBases, nextBases] = await Promise.all([readLAndH(prev), readLAndH(next)]);
const scalars = new Uint8Array(randomBytes(points * LINK_SCALAR_BYTES));
const ffMs = await median(() => curve.G1.multiExpAffine(nextBases, scalars), runs);
// One small MSM first, so the thread start-up is not timed.
await g1MultiExp(nextBases.subarray(0, 64), scalars.subarray(0, LINK_SCALAR_BYTES), LINK_SCALAR_BYTES);
const floorMs = await median(() => g1MultiExp(nextBases, scalars, LINK_SCALAR_BYTES), runs);
const floor2Ms = await median(
  () =>
    Promise.all([g1MultiExp(prevBases, scalars, LINK_SCALAR_BYTES), g1MultiExp(nextBases, scalars, LINK_SCALAR_BYTES)]),
  runs,
);
if (
  !curve.G1.eq(
    await g1MultiExp(nextBases, scalars, LINK_SCALAR_BYTES),
    await curve.G1.multiExpAffine(nextBases, scalars),
  )
)
  throw new Error('the kernel MSM and ffjavascript disagree');
// Field-sized scalars (below 2^253 < r), as the audit's check of contribution 0 uses: one run each.
const wideScalars = new Uint8Array(randomBytes(points * 32));
for (let i = 31; i < wideScalars.length; i += 32) wideScalars[i]! &= 0x1f;
const ffWide = await timed(() => curve.G1.multiExpAffine(nextBases, wideScalars));
const kernelWide = await timed(() => g1MultiExp(nextBases, wideScalars, 32));
if (!curve.G1.eq(kernelWide.value, ffWide.value))
  throw new Error('the kernel MSM and ffjavascript disagree on 32-byte scalars');

log('verifyLinkFromHead in a warm process: two MSMs (fresh scalars), one MSM (circuit key, head cached)');
await verifyLinkFromHead(z1, z2); // warm-up: curve and worker start-up are not part of the check
const linkMs = await median(() => verifyLinkFromHead(z1, z2), runs);
const key = circuitChallengeKey(randomBytes(32), 'bench');
const { combination: head } = await verifyLinkFromHead(z0, z1, { challenge: { key } });
const cachedMs = await median(() => verifyLinkFromHead(z1, z2, { challenge: { key, head } }), runs);

log('ceremony verify-link (CLI process)');
const cliLinkMs = await median(() => runVerifyLinkCli(z1, z2), runs);

log('snarkjs zKey.verifyFromInit');
const fromInit = await timed(() => snarkjs.zKey.verifyFromInit(z0, ptau, z2, silent));
if (fromInit.value !== true) throw new Error('snarkjs verifyFromInit refused the benchmark key');

log('verifyLinkFromInit (ceremony verify: structure + verifyFromInit)');
const ceremonyVerify = await timed(() =>
  verifyLinkFromInit({ initZkeyPath: z0, ptauPath: ptau, headZkeyPath: z1, candidatePath: z2 }),
);

log('npx snarkjs zkey verify (r1cs + ptau)');
const cli = await timed(() => runSnarkjsCli(['zkey', 'verify', r1cs, ptau, z2]));
if (cli.value !== 0) throw new Error(`npx snarkjs zkey verify exited with ${cli.value}`);

const rows: Array<[string, number]> = [
  [`ffjavascript MSM (${points} points, ${LINK_SCALAR_BYTES * 8}-bit scalars)`, ffMs],
  [`kernel MSM = floor (${points} points, ${LINK_SCALAR_BYTES * 8}-bit scalars)`, floorMs],
  [`kernel MSM floor (2 × ${points} points)`, floor2Ms],
  [`ffjavascript MSM (${points} points, 253-bit scalars)`, ffWide.ms],
  [`kernel MSM (${points} points, 253-bit scalars)`, kernelWide.ms],
  ['verify-link, warm, head cached (1 MSM: coordinator)', cachedMs],
  ['verify-link, warm, two MSMs (verifyLinkFromHead)', linkMs],
  ['ceremony verify-link (CLI process)', cliLinkMs],
  ['snarkjs zKey.verifyFromInit', fromInit.ms],
  ['ceremony verify (verifyLinkFromInit)', ceremonyVerify.ms],
  ['npx snarkjs zkey verify (r1cs + ptau)', cli.ms],
];
const width = Math.max(...rows.map(([name]) => name.length));
const shape =
  values.circuit !== undefined
    ? `${values.circuit} (real-shaped, domain 2^${chain.power})`
    : `2^${power} constraints (${terms} term(s) per left factor)`;
process.stdout.write(
  `circuit: ${shape}, ${prev.header.nVars} variables, ` +
    `${prev.header.nPublic} public, |L| = ` +
    `${prev.sections.get(SECTION.l)!.size / 64}, ` +
    `|H| = ${prev.header.domainSize}; median of ${runs} except the 253-bit rows and those below the CLI's (1 run)\n`,
);
process.stdout.write(`${'check'.padEnd(width)}  ${'time (ms)'.padStart(10)}  ${'÷ verifyLinkFromHead'.padStart(12)}\n`);
for (const [name, ms] of rows) {
  process.stdout.write(
    `${name.padEnd(width)}  ${ms.toFixed(0).padStart(10)}  ${(ms / linkMs).toFixed(2).padStart(12)}\n`,
  );
}
const x = (a: number, b: number): string => `${(a / b).toFixed(1)}×`;
process.stdout.write(
  `ratios (same run): ffjavascript MSM ÷ kernel MSM ${x(ffMs, floorMs)} ` +
    `(64-bit), ${x(ffWide.ms, kernelWide.ms)} (253-bit); verifyFromInit ÷ ` +
    `CLI verify-link ${x(fromInit.ms, cliLinkMs)}, ÷ warm verify-link ` +
    `${x(fromInit.ms, linkMs)}, ÷ cached ${x(fromInit.ms, cachedMs)}; ` +
    `zkey verify ÷ CLI verify-link ${x(cli.ms, cliLinkMs)}, ÷ ceremony verify ${x(cli.ms, ceremonyVerify.ms)}; ` +
    `cached ÷ 1-MSM floor ${(cachedMs / floorMs).toFixed(2)}, warm ÷ 2-MSM ` +
    `floor ${(linkMs / floor2Ms).toFixed(2)}, CLI start-up ≈ ` +
    `${(cliLinkMs - linkMs).toFixed(0)} ms\n`,
);
await closeMultiExp();
await releaseBn128();
