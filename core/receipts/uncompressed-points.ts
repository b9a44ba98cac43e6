/**
 * Key points as snarkjs hashes them (ffjavascript's `toRprUncompressed`), from the bytes a zkey
 * stores (each coordinate little-endian in Montgomery form), with BigInt arithmetic and no curve
 * library, so the receipt check runs the same in the browser and in Node. A G1 point becomes x ‖ y,
 * each 32 bytes big-endian; a G2 point x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0 (ffjavascript reverses each whole
 * Fq² coordinate). The point at infinity is stored as zeros and hashed as zeros. A few hundred points
 * per key: BigInt is plenty. tests/core/receipt-zkey-history.test.ts compares the result with
 * ffjavascript's on real keys.
 */
import { BN254_Q } from '../crypto/bn254-moduli.ts';

const N8 = 32;

/** The inverse of 2^256 modulo q: a Montgomery value x·2^256 times it is x. */
const R_INVERSE = (() => {
  // Extended Euclid on (2^256 mod q, q).
  let [a, b, x, y] = [(1n << 256n) % BN254_Q, BN254_Q, 1n, 0n];
  while (b !== 0n) {
    const t = a / b;
    [a, b, x, y] = [b, a - t * b, y, x - t * y];
  }
  return ((x % BN254_Q) + BN254_Q) % BN254_Q;
})();

/** A stored coordinate that is not below q: no honest key holds one, and snarkjs would hash it differently. */
export class NonCanonicalCoordinateError extends RangeError {
  constructor() {
    super('a point coordinate is not a canonical field element (not below the field modulus)');
    this.name = 'NonCanonicalCoordinateError';
  }
}

function readLittleEndian(bytes: Uint8Array, offset: number): bigint {
  let value = 0n;
  for (let i = offset + N8 - 1; i >= offset; i--) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

/** Writes the Fq element stored at `bytes[from…]` (LE Montgomery) to `out[to…]` as 32 bytes big-endian. */
function convertCoordinate(bytes: Uint8Array, from: number, out: Uint8Array, to: number): void {
  const montgomery = readLittleEndian(bytes, from);
  if (montgomery >= BN254_Q) throw new NonCanonicalCoordinateError();
  let value = (montgomery * R_INVERSE) % BN254_Q;
  for (let i = to + N8 - 1; i >= to; i--) {
    out[i] = Number(value & 0xffn);
    value >>= 8n;
  }
}

/** A stored G1 point (64 bytes) as snarkjs's 64-byte uncompressed encoding. */
export function g1Uncompressed(stored: Uint8Array): Uint8Array {
  if (stored.length !== 2 * N8) throw new RangeError(`a G1 point is ${2 * N8} bytes, not ${stored.length}`);
  const out = new Uint8Array(2 * N8);
  convertCoordinate(stored, 0, out, 0);
  convertCoordinate(stored, N8, out, N8);
  return out;
}

/** A stored G2 point (128 bytes: x.c0, x.c1, y.c0, y.c1) as snarkjs's 128-byte uncompressed encoding. */
export function g2Uncompressed(stored: Uint8Array): Uint8Array {
  if (stored.length !== 4 * N8) throw new RangeError(`a G2 point is ${4 * N8} bytes, not ${stored.length}`);
  const out = new Uint8Array(4 * N8);
  for (const coordinate of [0, 2 * N8]) {
    convertCoordinate(stored, coordinate + N8, out, coordinate);
    convertCoordinate(stored, coordinate, out, coordinate + N8);
  }
  return out;
}
