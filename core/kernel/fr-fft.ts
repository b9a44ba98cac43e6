/**
 * The inverse FFT over F_r on the kernel (fr-fft.c), for the audit's check of the ptau's Lagrange
 * sections: c_j = (1/n)·Σ_i v_i·ω^(-ij) for n = 2^k values, ω the given n-th root of unity. One
 * instance per call, on the calling thread: its memory (the values and half as many twiddles,
 * 384 MiB at 2^23) lives as long as the result, a view of it, is held.
 */
import { BN254_R, fieldBytesLe, modPow } from '../crypto/bn254-moduli.ts';
import { kernelWasm } from './kernel-wasm.generated.ts';

const N8 = 32;
const PAGE = 65536;
/**
 * The largest transform the kernel takes: its memory is WebAssembly's 32-bit one (2 GiB here), and
 * 2^25 values with their twiddles take 1.5 GiB of it.
 */
export const FR_FFT_MAX_LOG = 25;

interface FftExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  fr_ifft(values: number, logN: number, omegaInv: number, nInv: number, twiddles: number): void;
}

/** True when every 32-byte little-endian value is below r (the kernel's field ops take no others). */
function allBelowR(values: Uint8Array): boolean {
  const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
  // r's top limb: any value whose top limb is below it is below r, which covers all but a sliver.
  const top = Number(BN254_R >> 224n);
  for (let at = 0; at < values.byteLength; at += N8) {
    const high = view.getUint32(at + 28, true);
    if (high < top) continue;
    let value = 0n;
    for (let i = N8 - 1; i >= 0; i--) value = (value << 8n) | BigInt(values[at + i]!);
    if (value >= BN254_R) return false;
  }
  return true;
}

/**
 * Copies `width`-byte values into 32-byte slots of `memory` from `data` on, leaving the slots' upper
 * bytes as they are (zero in fresh memory). Word by word where alignment allows: a subarray per
 * value is far slower (docs/kernel.md).
 */
function widenInto(memory: Uint8Array, data: number, values: Uint8Array, width: number): void {
  const n = values.byteLength / width;
  if (width % 4 !== 0 || values.byteOffset % 4 !== 0 || (memory.byteOffset + data) % 4 !== 0) {
    for (let i = 0; i < n; i++) memory.set(values.subarray(i * width, (i + 1) * width), data + i * N8);
    return;
  }
  const words = width / 4;
  const from = new Uint32Array(values.buffer, values.byteOffset, n * words);
  const to = new Uint32Array(memory.buffer, memory.byteOffset + data, n * (N8 / 4));
  for (let i = 0; i < n; i++) {
    const source = i * words;
    const target = i * (N8 / 4);
    for (let w = 0; w < words; w++) to[target + w] = from[source + w]!;
  }
}

/** `width`-byte little-endian scalars (1 to 32 bytes) as 32-byte ones, in a new array. */
export function widenScalars(values: Uint8Array, width: number): Uint8Array {
  const out = new Uint8Array((values.byteLength / width) * N8);
  widenInto(out, 0, values, width);
  return out;
}

/**
 * c = iFFT(values): `values` holds n = 2^k scalars of `width` bytes each (little-endian, below r;
 * narrower ones, such as the audit's 128-bit random scalars, are widened as they are copied in),
 * `omega` is a primitive n-th root of unity of F_r. Returns n 32-byte scalars, standard form, in the
 * instance's memory (a view: no copy of the result).
 */
export async function frInverseFft(values: Uint8Array, omega: bigint, width = N8): Promise<Uint8Array> {
  if (!Number.isInteger(width) || width < 1 || width > N8) throw new RangeError('scalars are 1 to 32 bytes wide');
  const n = values.byteLength / width;
  const logN = Math.log2(n);
  if (!Number.isInteger(logN) || logN > FR_FFT_MAX_LOG)
    throw new RangeError(`the values must be 2^k scalars of ${width} bytes, k ≤ ${FR_FFT_MAX_LOG}`);
  if (modPow(omega, BigInt(n), BN254_R) !== 1n || (n > 1 && modPow(omega, BigInt(n / 2), BN254_R) === 1n))
    throw new RangeError(`ω is not a primitive ${n}-th root of unity`);
  // Below 32 bytes every value is below r.
  if (width === N8 && !allBelowR(values)) throw new RangeError('every value must be below r');
  const instance = await WebAssembly.instantiate(await WebAssembly.compile(kernelWasm()), {});
  const exports = instance.exports as unknown as FftExports;
  const at = Math.ceil(Number(exports.__heap_base.value) / 64) * 64;
  const constants = at;
  const data = at + 2 * N8;
  const twiddles = data + n * N8;
  const end = twiddles + Math.max(1, n / 2) * N8;
  const have = exports.memory.buffer.byteLength;
  if (end > have) exports.memory.grow(Math.ceil((end - have) / PAGE));
  const memory = new Uint8Array(exports.memory.buffer);
  memory.set(fieldBytesLe(modPow(omega, BN254_R - 2n, BN254_R)), constants);
  memory.set(fieldBytesLe(modPow(BigInt(n), BN254_R - 2n, BN254_R)), constants + N8);
  if (width === N8) memory.set(values, data);
  else widenInto(memory, data, values, width);
  exports.fr_ifft(data, logN, constants, constants + N8, twiddles);
  return new Uint8Array(exports.memory.buffer, data, n * N8);
}
