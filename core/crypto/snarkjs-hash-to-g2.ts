/**
 * snarkjs's keypair.hashToG2, defined once and without Node: the G2 point a contributor raises to
 * its secret, drawn from ffjavascript's ChaCha stream seeded with the record's transcript digest.
 * The link verifier (through snarkjs-rng.ts) and the receipt check, in the page too
 * (core/receipts/receipt-pairings.ts), must reproduce it bit for bit.
 */
import { ChaCha, type Bn128Curve } from 'ffjavascript';

/** ffjavascript's ChaCha stream, passed as is to `Fr.fromRng`, `G1.fromRng`, `G2.fromRng`. */
export type SnarkjsRng = InstanceType<typeof ChaCha>;

/** A ChaCha stream seeded with the first eight big-endian 32-bit words of `digest`, as snarkjs seeds it. */
export function rngFromDigest(digest: Uint8Array): SnarkjsRng {
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  const seed: number[] = [];
  for (let i = 0; i < 8; i++) seed.push(view.getUint32(i * 4, false));
  return new ChaCha(seed);
}

/** snarkjs keypair.hashToG2: the G2 point (projective) drawn from the stream seeded with `digest`. */
export function hashToG2(curve: Bn128Curve, digest: Uint8Array): Uint8Array {
  const g2 = curve.G2;
  return g2.fromRng(rngFromDigest(digest));
}
