/**
 * The kernel's MSM (g1-msm.c, one thread, and g1MultiExp on the thread pool) against
 * ffjavascript's multiExpAffine: random inputs of several sizes (the bucket tree's odd counts, the
 * split across threads) with 8- and 32-byte scalars, and the inputs affine addition cannot take
 * blindly: points at infinity, zero scalars, one point repeated (doublings inside a bucket), P with
 * −P under the same scalar (pairs that vanish), r−1, sums that are the identity. A process that
 * used g1MultiExp exits without closing it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { G1MsmKernel, msmWindowBits, scalarBitLength } from '../../core/kernel/g1-msm-kernel.ts';
import { closeG1MultiExp, g1MultiExp, g1MultiExpOrFallback } from '../../core/kernel/g1-multi-exp.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

let curve: Bn128Curve;
let kernel: G1MsmKernel;
type G1 = Bn128Curve['G1'] & { neg(p: Uint8Array): Uint8Array; eq(a: Uint8Array, b: Uint8Array): boolean };
const G1 = (): G1 => curve.G1 as G1;

function randomFr(): bigint {
  return BigInt(`0x${randomBytes(40).toString('hex')}`) % BN254_R;
}

function scalarBytesOf(value: bigint, width: number): Uint8Array {
  const out = new Uint8Array(width);
  for (let i = 0; i < width; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** n affine points in the zkey layout: a few random ones, then sums of them (fast, all distinct in practice). */
function randomBases(n: number): Uint8Array {
  const g = G1();
  const seeds = Array.from({ length: 16 }, () => g.timesFr(g.g, (curve.Fr as unknown as { e(v: bigint): Uint8Array }).e(randomFr())));
  const out = new Uint8Array(n * 64);
  let p = seeds[0]!;
  for (let i = 0; i < n; i++) {
    p = g.add(p, seeds[i % 16]!);
    g.toRprLEM(out, i * 64, g.toAffine(p));
  }
  return out;
}

function randomScalars(n: number, width: number): Uint8Array {
  if (width < 32) return new Uint8Array(randomBytes(n * width));
  const out = new Uint8Array(n * 32);
  for (let i = 0; i < n; i++) out.set(scalarBytesOf(randomFr(), 32), i * 32);
  return out;
}

/** The kernel on one thread, its partial sums added. */
function kernelSum(bases: Uint8Array, scalars: Uint8Array, width: number): Uint8Array {
  const parts = kernel.multiExpParts(bases, scalars, width);
  let sum = G1().zero;
  for (let offset = 0; offset < parts.byteLength; offset += 64) {
    if (parts.subarray(offset, offset + 64).some((byte) => byte !== 0)) sum = G1().add(sum, G1().fromRprLEM(parts, offset));
  }
  return sum;
}

/** Equal points; ffjavascript has more than one encoding of the identity, which eq does not always match. */
function samePoint(a: Uint8Array, b: Uint8Array): boolean {
  return G1().isZero(a) || G1().isZero(b) ? G1().isZero(a) && G1().isZero(b) : G1().eq(a, b);
}

async function assertBothMatch(bases: Uint8Array, scalars: Uint8Array, width: number, what: string): Promise<void> {
  const expected = await G1().multiExpAffine(bases, scalars);
  assert.ok(samePoint(kernelSum(bases, scalars, width), expected), `one thread: ${what}`);
  assert.ok(samePoint(await g1MultiExp(bases, scalars, width), expected), `pool: ${what}`);
}

function pointAt(bases: Uint8Array, i: number): Uint8Array {
  return bases.subarray(i * 64, (i + 1) * 64);
}

function negated(lem: Uint8Array): Uint8Array {
  const out = new Uint8Array(64);
  G1().toRprLEM(out, 0, G1().toAffine(G1().neg(G1().fromRprLEM(lem, 0))));
  return out;
}

before(async () => {
  curve = await getBn128();
  kernel = await G1MsmKernel.instantiate();
});
after(async () => {
  await closeG1MultiExp();
  await releaseBn128();
});

describe('G1 MSM kernel', () => {
  for (const width of [8, 32]) {
    it(`sums like ffjavascript on random inputs, ${width}-byte scalars`, async () => {
      for (const n of [1, 2, 3, 17, 8191, 8193, 10_000]) {
        await assertBothMatch(randomBases(n), randomScalars(n, width), width, `${n} points`);
      }
    });
  }

  it('takes points at infinity, zero scalars and r − 1', async () => {
    const n = 600;
    const bases = randomBases(n);
    const scalars = randomScalars(n, 32);
    for (let i = 0; i < n; i += 7) bases.fill(0, i * 64, (i + 1) * 64);
    for (let i = 3; i < n; i += 5) scalars.fill(0, i * 32, (i + 1) * 32);
    for (let i = 1; i < n; i += 11) scalars.set(scalarBytesOf(BN254_R - 1n, 32), i * 32);
    await assertBothMatch(bases, scalars, 32, 'mixed');
    await assertBothMatch(bases, new Uint8Array(n * 32), 32, 'all scalars zero');
    // ffjavascript itself answers (0, 0, 1), not a point, when every base is at infinity.
    assert.ok(G1().isZero(kernelSum(new Uint8Array(n * 64), scalars, 32)), 'one thread: all points at infinity');
    assert.ok(G1().isZero(await g1MultiExp(new Uint8Array(n * 64), scalars, 32)), 'pool: all points at infinity');
    await assertBothMatch(new Uint8Array(0), new Uint8Array(0), 8, 'no points');
    assert.ok(G1().isZero(await g1MultiExp(bases, new Uint8Array(n * 8), 8)), 'zero scalars sum to the identity');
  });

  it('takes one point repeated (doublings in a bucket) and P with −P (pairs that vanish)', async () => {
    const distinct = randomBases(5);
    for (const width of [8, 32]) {
      const n = 9000;
      const bases = new Uint8Array(n * 64);
      const scalars = new Uint8Array(n * width);
      const same = randomScalars(1, width);
      for (let i = 0; i < n; i++) {
        const p = pointAt(distinct, i % 5);
        // Pairs (P, −P) with one scalar, P repeated with one scalar, and equal points with random scalars.
        if (i < 3000) bases.set(i % 2 === 0 ? p : negated(p), i * 64);
        else bases.set(pointAt(distinct, 0), i * 64);
        scalars.set(i < 6000 ? same : randomScalars(1, width), i * width);
      }
      await assertBothMatch(bases, scalars, width, `${width}-byte scalars`);
    }
    // A sum that is exactly the identity: P·s + (−P)·s.
    const p = pointAt(distinct, 1);
    const bases = new Uint8Array(128);
    bases.set(p, 0);
    bases.set(negated(p), 64);
    const s = randomScalars(1, 32);
    const scalars = new Uint8Array(64);
    scalars.set(s, 0);
    scalars.set(s, 32);
    assert.ok(G1().isZero(kernelSum(bases, scalars, 32)));
    assert.ok(G1().isZero(await g1MultiExp(bases, scalars, 32)));
  });

  it('sizes its windows from the scalars actually given', () => {
    const scalars = new Uint8Array(64);
    assert.equal(scalarBitLength(scalars, 32), 0);
    scalars[32 + 3] = 0x05;
    assert.equal(scalarBitLength(scalars, 32), 27);
    scalars[31] = 0x30;
    assert.equal(scalarBitLength(scalars, 32), 254);
    assert.ok(msmWindowBits(1 << 16, 64) > msmWindowBits(64, 64));
  });

  it('leaves a caller\'s Buffer usable (its slices are views: they must be copied, not transferred)', async () => {
    const n = 9000;
    const bases = Buffer.from(randomBases(n));
    const scalars = Buffer.from(randomScalars(n, 8));
    const before = Buffer.from(bases);
    const expected = await G1().multiExpAffine(new Uint8Array(bases), new Uint8Array(scalars));
    assert.ok(samePoint(await g1MultiExp(bases, scalars, 8), expected));
    assert.equal(bases.byteLength, n * 64);
    assert.deepEqual(bases, before);
  });

  it('refuses buffers that do not match', async () => {
    await assert.rejects(g1MultiExp(new Uint8Array(63), new Uint8Array(8), 8), RangeError);
    await assert.rejects(g1MultiExp(new Uint8Array(64), new Uint8Array(7), 8), RangeError);
    await assert.rejects(g1MultiExp(new Uint8Array(64), new Uint8Array(33), 33), RangeError);
    // The fallback is for a kernel that cannot run, not for a caller's mistake.
    await assert.rejects(g1MultiExpOrFallback(new Uint8Array(64), new Uint8Array(7), 8), RangeError);
  });

  it('the fallback entry point computes the kernel\'s sum', async () => {
    const bases = randomBases(5000);
    const scalars = randomScalars(5000, 32);
    assert.ok(samePoint(await g1MultiExpOrFallback(bases, scalars, 32), await G1().multiExpAffine(bases, scalars)));
  });

  it('lets a process that used it exit without closing it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'g1-msm-exit-'));
    const script = path.join(dir, 'use-msm.mts');
    const moduleUrl = (relative: string): string => pathToFileURL(path.join(REPO_ROOT, relative)).href;
    writeFileSync(script, [
      `const { g1MultiExp } = await import('${moduleUrl('core/kernel/g1-multi-exp.ts')}');`,
      `const { releaseBn128 } = await import('${moduleUrl('core/crypto/bn128.ts')}');`,
      'const p = await g1MultiExp(new Uint8Array(64), new Uint8Array(8), 8);',
      'await releaseBn128();',
      "console.log('summed', p.length);",
    ].join('\n'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // Bounded wait: a process kept alive by the threads is killed and fails the test.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    clearTimeout(timer);
    assert.equal(signal, null, `the process had to be killed; output:\n${output}`);
    assert.equal(code, 0, output);
    assert.match(output, /summed 96/);
  });
});
