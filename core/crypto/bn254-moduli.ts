/**
 * The two primes of BN254 (bn128, alt_bn128), defined once, and powers modulo them. No imports:
 * the browser bundle (the G1 kernel) and server-only modules share it.
 */

/** q: the base field, in which point coordinates live. */
export const BN254_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

/** r: the scalar field, the order of G1 and G2 (the r1cs prime, the Semaphore SNARK field). */
export const BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** base^exponent mod modulus, by squaring (a prime modulus and exponent p − 2 give an inverse). */
export function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** A field element (below 2^256) as 32 little-endian bytes, the keys' and the kernel's layout. */
export function fieldBytesLe(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}
