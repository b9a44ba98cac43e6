/**
 * The G1 kernel against ffjavascript (snarkjs's own curve code), in both its walks (SIMD, four
 * points a vector, and scalar): the same points times the same scalar give the same bytes, for
 * random scalars, scalars whose GLV halves are negative or empty, the point at infinity, batches
 * that do not fill the kernel's batch size and, in the SIMD walk, batches that are not a multiple of
 * its four lanes; the chain planner refuses the scalars its affine formulas cannot follow; the
 * committed WebAssembly (both modules) is what the kernel's C files compile to; the pool of threads
 * gives what one kernel gives, and uses the SIMD walk where Node validates it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { BN254_R, GLV_LAMBDA, glvSplit, planScaleChain } from '../../core/kernel/g1-scale-chain.ts';
import { G1ScaleKernel, simdKernelAvailable, type ScaleKernelKind } from '../../core/kernel/g1-scale-kernel.ts';
import { kernelWasm } from '../../core/kernel/kernel-wasm.generated.ts';
import { kernelSimdWasm } from '../../core/kernel/kernel-simd-wasm.generated.ts';
import {
  buildKernelSimdWasm,
  buildKernelWasm,
  KERNEL_MODULE_FILE,
  KERNEL_SIMD_MODULE_FILE,
  KERNEL_SIMD_SOURCES,
  KERNEL_SOURCES,
  kernelProducers,
  localToolchain,
} from '../../core/kernel/build-kernel-wasm.ts';
import { nodeScalePool } from '../../core/kernel/node-scale-pool.ts';

let curve: Bn128Curve;
const Fr = () => curve.Fr as unknown as { e(v: bigint): Uint8Array };

function randomScalar(): bigint {
  return BigInt(`0x${randomBytes(32).toString('hex')}`) % BN254_R;
}

/** n points r_i·G in the zkey's layout, with the point at infinity at `zeroAt`. */
function points(n: number, zeroAt = -1): Uint8Array {
  const out = new Uint8Array(n * 64);
  for (let i = 0; i < n; i++) {
    if (i === zeroAt) continue;
    curve.G1.toRprLEM(out, i * 64, curve.G1.toAffine(curve.G1.timesFr(curve.G1.g, Fr().e(randomScalar()))));
  }
  return out;
}

function reference(input: Uint8Array, k: bigint): Uint8Array {
  const out = new Uint8Array(input.byteLength);
  for (let i = 0; i < input.byteLength / 64; i++) {
    curve.G1.toRprLEM(out, i * 64, curve.G1.toAffine(curve.G1.timesFr(curve.G1.fromRprLEM(input, i * 64), Fr().e(k))));
  }
  return out;
}

before(async () => {
  curve = await getBn128();
});
after(releaseBn128);

describe('G1 kernel', () => {
  for (const kind of ['simd', 'scalar'] as ScaleKernelKind[]) {
    it(`multiplies like ffjavascript in the ${kind} walk, for every kind of scalar, infinity included`, async () => {
      await multipliesLikeFfjavascript(kind);
    });
  }

  it("takes the SIMD walk by default where Node's WebAssembly validates it", async () => {
    assert.equal(simdKernelAvailable(), true, 'Node 24 has WebAssembly SIMD');
    assert.equal((await G1ScaleKernel.instantiate()).kind, 'simd');
  });

  it('the SIMD walk pads a batch that is not a multiple of its lanes, whatever the batch size', async () => {
    const k = randomScalar();
    const chain = planScaleChain(k)!;
    for (const [count, batchPoints] of [
      [1, 16],
      [2, 16],
      [3, 4],
      [9, 4],
      [21, 10],
    ] as const) {
      const kernel = await G1ScaleKernel.instantiate({ kind: 'simd', batchPoints });
      const input = points(count, count > 2 ? 2 : -1);
      const mine = input.slice();
      kernel.scale(mine, chain);
      assert.deepEqual(
        Buffer.from(mine),
        Buffer.from(reference(input, k)),
        `${count} points, batches of ${batchPoints}`,
      );
    }
  });

  async function multipliesLikeFfjavascript(kind: ScaleKernelKind): Promise<void> {
    const kernel = await G1ScaleKernel.instantiate({ kind, batchPoints: 16 });
    assert.equal(kernel.kind, kind);
    const input = points(37, 5);
    const scalars = [
      1n,
      2n,
      3n,
      17n,
      BN254_R - 1n,
      GLV_LAMBDA,
      GLV_LAMBDA + 1n,
      BN254_R - GLV_LAMBDA,
      randomScalar(),
      randomScalar(),
      randomScalar(),
    ];
    for (const k of scalars) {
      const chain = planScaleChain(k);
      assert.ok(chain, `a chain for ${k}`);
      const mine = input.slice();
      kernel.scale(mine, chain);
      assert.deepEqual(Buffer.from(mine), Buffer.from(reference(input, k)), `scalar ${k}`);
      assert.deepEqual(Buffer.from(mine.subarray(5 * 64, 6 * 64)), Buffer.alloc(64), 'infinity stays infinity');
    }
    // The split really is short and really recomposes (the planner also asserts the latter).
    const [k1, k2] = glvSplit(randomScalar());
    assert.ok((k1 < 0n ? -k1 : k1) < 1n << 128n && (k2 < 0n ? -k2 : k2) < 1n << 128n);
  }

  it('refuses a zero scalar (s⁻¹ is never zero; its chain would start at infinity)', () => {
    assert.equal(planScaleChain(0n), null);
    assert.equal(planScaleChain(BN254_R), null);
  });

  it('the pool of threads gives the bytes one kernel gives', async () => {
    const pool = await nodeScalePool(2);
    try {
      const k = randomScalar();
      const chain = planScaleChain(k)!;
      const input = points(1001);
      const pooled = await pool.scale(input.slice(), chain);
      assert.equal(pool.workers, 2);
      assert.equal(pool.simd, true, 'each thread said it runs the SIMD walk');
      assert.deepEqual(Buffer.from(pooled), Buffer.from(reference(input, k)));
    } finally {
      pool.close();
    }
  });

  const cFiles = KERNEL_SOURCES.map((file) => path.basename(file)).join(', ');
  it(`the committed WebAssembly is what the kernel's C files (${cFiles}) compile to`, () => {
    const committed = Buffer.from(kernelWasm());
    const built = buildKernelWasm();
    if (!built.equals(committed)) assert.fail(kernelMismatchMessage(committed));
  });

  const simdFiles = KERNEL_SIMD_SOURCES.map((file) => path.basename(file)).join(', ');
  it(`the committed SIMD WebAssembly is what ${simdFiles} compiles to`, () => {
    const committed = Buffer.from(kernelSimdWasm());
    const built = buildKernelSimdWasm();
    if (!built.equals(committed)) assert.fail(kernelMismatchMessage(committed, KERNEL_SIMD_MODULE_FILE));
  });

  it('the committed WebAssembly names the clang that built it, for the message above', () => {
    assert.match(kernelProducers(kernelWasm()).join(', '), /clang \d+\.\d+/);
    const message = kernelMismatchMessage(Buffer.from(kernelWasm()));
    assert.match(message, /built with .*clang \d+\.\d+.*This machine has .*clang/s);
  });
});

/** What to do when the bytes differ: the versions that built the committed bytes beside the ones installed here. */
function kernelMismatchMessage(committed: Buffer, file = KERNEL_MODULE_FILE): string {
  const recorded = kernelProducers(committed).join(', ') || 'an unrecorded clang';
  const header = /^\/\/ Built with (.*?):/m.exec(readFileSync(file, 'utf8'))?.[1];
  const local = localToolchain();
  const version = (text: string) => /\d+\.\d+\.\d+/.exec(text)?.[0];
  const sameClang = version(recorded) !== undefined && version(recorded) === version(local.clang);
  return [
    `core/kernel/${path.basename(file)} is not what this machine's compiler makes of the kernel's C files.`,
    `The committed bytes were built with ${recorded} (their producers section)` +
      `${header ? `; the file's header says ${header}` : ''}.`,
    `This machine has ${local.clang}; ${local.linker}.`,
    sameClang
      ? 'Same clang version: the C files (or CLANG_ARGS) changed since the bytes were committed; ' +
        'run `npm run build:kernel` and commit the generated files.'
      : 'Another clang version emits other bytes from the same C: install the version above ' +
        '(Debian 12: apt-get install clang lld), or, after changing the C, rebuild with `npm run build:kernel` ' +
        'and commit the bytes with the versions it records.',
  ].join('\n');
}
