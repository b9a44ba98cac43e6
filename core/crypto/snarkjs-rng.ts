/**
 * The ChaCha streams snarkjs derives from public bytes, defined once: from a beacon
 * (misc.rngFromBeaconParams, which is how a beacon contribution's secret is chosen) and from a
 * digest (keypair.hashToG2, the G2 point a contributor raises to its secret). snarkjs does not
 * export them, and both the link verifier (a beacon record's key must be the one its beacon
 * derives) and the development ptau (its one contribution is a beacon) must reproduce them bit for
 * bit; tests/ptau compares a whole development ptau with snarkjs's own beacon output, and
 * tests/core/verify-link-from-head.test.ts checks snarkjs's beacon contributions, so a drift cannot go unnoticed.
 */
import { createHash } from 'node:crypto';
import { ChaCha, type Bn128Curve } from 'ffjavascript';

/** ffjavascript's ChaCha stream, passed as is to `Fr.fromRng`, `G1.fromRng`, `G2.fromRng`. */
export type SnarkjsRng = InstanceType<typeof ChaCha>;

/** A ChaCha stream seeded with the first eight big-endian 32-bit words of `digest`, as snarkjs seeds it. */
function rngFromDigest(digest: Uint8Array): SnarkjsRng {
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  const seed: number[] = [];
  for (let i = 0; i < 8; i++) seed.push(view.getUint32(i * 4, false));
  return new ChaCha(seed);
}

/** snarkjs misc.rngFromBeaconParams: the beacon SHA-256'd 2^iterationsExp times, then ChaCha. */
export function rngFromBeacon(beaconHash: Uint8Array, iterationsExp: number): SnarkjsRng {
  let digest: Uint8Array = beaconHash;
  // 2^n as a float is exact for any n a beacon can carry (≤ 63); the loop is the n that was asked.
  for (let i = 0, n = 2 ** iterationsExp; i < n; i++) digest = createHash('sha256').update(digest).digest();
  return rngFromDigest(digest);
}

/** snarkjs keypair.hashToG2: the G2 point (projective) drawn from the stream seeded with `digest`. */
export function hashToG2(curve: Bn128Curve, digest: Uint8Array): Uint8Array {
  const g2 = curve.G2;
  return g2.fromRng(rngFromDigest(digest));
}
