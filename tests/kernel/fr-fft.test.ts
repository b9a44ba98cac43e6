/**
 * The kernel's inverse FFT over F_r (fr-fft.c) against ffjavascript's `Fr.ifft`, which the audit
 * used before and whose roots of unity (those of snarkjs's preparePhase2) it keeps: random values
 * and the field's edges (0, 1, r − 1) at every size from 2^0 to 2^12, the definition itself in
 * BigInt at a small size, what it refuses; and the same transform on a thread of its own (the
 * audit's path from 2^16): the same coefficients, the same refusals, and the calling thread's
 * answer where no thread starts or the thread dies.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buildBn128 } from 'ffjavascript';
import { BN254_R, modPow as modPowMod } from '../../core/crypto/bn254-moduli.ts';
import { FR_FFT_MAX_LOG, frInverseFft, widenScalars } from '../../core/kernel/fr-fft.ts';
import { FFT_THREAD_WARNING_CODE, frInverseFftOnThread } from '../../core/kernel/fr-fft-on-thread.ts';
import { RealWorker, withWorkerClass } from '../helpers/worker-class.ts';

const N8 = 32;

function le(value: bigint): Uint8Array {
  const out = new Uint8Array(N8);
  for (let i = 0; i < N8; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

function readScalar(bytes: Uint8Array, index: number): bigint {
  let value = 0n;
  for (let i = N8 - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[index * N8 + i]!);
  return value;
}

/** n scalars below r: random, with 0, 1 and r − 1 among them. */
function values(n: number): Uint8Array {
  const out = new Uint8Array(n * N8);
  for (let i = 0; i < n; i++) {
    const edge = [0n, 1n, BN254_R - 1n][i % 7];
    const value = edge ?? BigInt(`0x${randomBytes(N8).toString('hex')}`) % BN254_R;
    out.set(le(value), i * N8);
  }
  return out;
}

const modPow = (base: bigint, exponent: bigint): bigint => modPowMod(base, exponent, BN254_R);

describe('the kernel inverse FFT over F_r', () => {
  it("gives ffjavascript's Fr.ifft at every size from 2^0 to 2^12, with ffjavascript's roots", async () => {
    const curve = await buildBn128(true);
    try {
      const Fr = curve.Fr;
      for (let k = 0; k <= 12; k++) {
        const input = values(2 ** k);
        const expected = await Fr.batchFromMontgomery(await Fr.ifft(await Fr.batchToMontgomery(input)));
        const omega = Fr.toObject(Fr.w[k]!);
        const got = await frInverseFft(input, omega);
        assert.deepEqual(Buffer.from(got), Buffer.from(expected), `2^${k}`);
      }
    } finally {
      await curve.terminate();
    }
  });

  it('takes narrower scalars (the audit’s 128-bit ones) as their 32-byte widening, aligned or not', async () => {
    const omega = modPow(5n, (BN254_R - 1n) / 1024n);
    // 16 bytes copied word by word; at an odd offset, and 5 bytes wide, a value at a time.
    for (const [width, offset] of [
      [16, 0],
      [16, 1],
      [5, 0],
    ] as const) {
      const narrow = new Uint8Array(randomBytes(offset + 1024 * width)).subarray(offset);
      const wide = new Uint8Array(1024 * N8);
      for (let i = 0; i < 1024; i++) wide.set(narrow.subarray(i * width, (i + 1) * width), i * N8);
      assert.deepEqual(
        Buffer.from(widenScalars(narrow, width)),
        Buffer.from(wide),
        `widened, ${width} bytes at +${offset}`,
      );
      const got = await frInverseFft(narrow, omega, width);
      assert.deepEqual(Buffer.from(got), Buffer.from(await frInverseFft(wide, omega)), `${width} bytes at +${offset}`);
    }
  });

  it('is c_j = (1/n)·Σ v_i·ω^(-ij), in BigInt, at 2^5', async () => {
    const n = 32;
    // A primitive 32nd root: 5 generates F_r* (r − 1 = 2^28·t), so 5^((r−1)/32) has order 32.
    const omega = modPow(5n, (BN254_R - 1n) / BigInt(n));
    const input = values(n);
    const got = await frInverseFft(input, omega);
    const omegaInv = modPow(omega, BN254_R - 2n);
    const nInv = modPow(BigInt(n), BN254_R - 2n);
    for (let j = 0; j < n; j++) {
      let sum = 0n;
      for (let i = 0; i < n; i++) sum += readScalar(input, i) * modPow(omegaInv, BigInt(i * j));
      assert.equal(readScalar(got, j), ((sum % BN254_R) * nInv) % BN254_R, `c_${j}`);
    }
  });

  it('refuses a size not a power of two, a value at or above r, and a root of the wrong order', async () => {
    const omega8 = modPow(5n, (BN254_R - 1n) / 8n);
    await assert.rejects(frInverseFft(new Uint8Array(3 * N8), omega8), /2\^k scalars/);
    // Past the kernel's memory (the audit then uses ffjavascript's): refused before anything is allocated.
    const tooMany = { byteLength: 2 ** (FR_FFT_MAX_LOG + 1) * N8 } as Uint8Array;
    await assert.rejects(frInverseFft(tooMany, omega8), new RegExp(`k ≤ ${FR_FFT_MAX_LOG}`));
    const big = values(8);
    big.set(le(BN254_R), 3 * N8);
    await assert.rejects(frInverseFft(big, omega8), /below r/);
    await assert.rejects(frInverseFft(values(8), modPow(5n, (BN254_R - 1n) / 4n)), /primitive 8-th root/);
    await assert.rejects(frInverseFft(values(8), modPow(5n, (BN254_R - 1n) / 16n)), /primitive 8-th root/);
  });

  it('gives the same coefficients on threads of its own, two at once, and the same refusals', async () => {
    const n = 2 ** 16;
    const omega = modPow(5n, (BN254_R - 1n) / BigInt(n));
    const narrow = new Uint8Array(randomBytes(n * 16));
    const firstHalf = narrow.subarray(0, (n / 2) * 16);
    const [whole, half] = await Promise.all([
      frInverseFftOnThread(narrow, omega, 16),
      frInverseFftOnThread(firstHalf, modPow(omega, 2n), 16),
    ]);
    assert.deepEqual(Buffer.from(whole), Buffer.from(await frInverseFft(narrow, omega, 16)));
    assert.deepEqual(Buffer.from(half), Buffer.from(await frInverseFft(firstHalf, modPow(omega, 2n), 16)));
    // The caller keeps its values (cloned into the thread, not transferred) and owns the result.
    assert.equal(narrow.byteLength, n * 16);
    assert.equal(whole.byteOffset, 0);
    assert.equal(whole.buffer.byteLength, n * N8);
    const big = values(8);
    big.set(le(BN254_R), 3 * N8);
    await assert.rejects(frInverseFftOnThread(big, modPow(5n, (BN254_R - 1n) / 8n)), (error: unknown) => {
      assert.ok(error instanceof RangeError, 'a RangeError, as on the calling thread');
      assert.match((error as Error).message, /below r/);
      return true;
    });
  });

  it('runs the transform on the calling thread where no thread can start, or where the thread dies', async () => {
    const n = 2 ** 10;
    const omega = modPow(5n, (BN254_R - 1n) / BigInt(n));
    const narrow = new Uint8Array(randomBytes(n * 16));
    const expected = Buffer.from(await frInverseFft(narrow, omega, 16));
    let started = 0;
    const withWorker = (replacement: typeof RealWorker): Promise<Uint8Array> =>
      withWorkerClass(replacement, () => frInverseFftOnThread(narrow, omega, 16));
    class RefusedWorker {
      constructor() {
        started++;
        throw new Error('no thread can start here');
      }
    }
    class DyingWorker extends RealWorker {
      constructor() {
        started++;
        super('process.exit(3)', { eval: true });
      }
    }
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      assert.deepEqual(
        Buffer.from(await withWorker(RefusedWorker as unknown as typeof RealWorker)),
        expected,
        'no thread: the calling thread’s answer',
      );
      assert.deepEqual(Buffer.from(await withWorker(DyingWorker)), expected, 'a thread that dies: the same');
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    assert.equal(started, 2, 'each call tried a thread first');
    const fallbacks = warnings.filter((w) => (w as Error & { code?: string }).code === FFT_THREAD_WARNING_CODE);
    assert.equal(fallbacks.length, 1, 'the fallback is said once a process, not once a transform');
    assert.match(fallbacks[0]!.message, /calling thread.*no thread can start here/);
  });
});
