/**
 * The ChaCha streams snarkjs derives from public bytes, defined once: from a beacon
 * (misc.rngFromBeaconParams, which is how a beacon contribution's secret is chosen) and from a
 * digest (keypair.hashToG2, the G2 point a contributor raises to its secret). snarkjs does not
 * export them, and both the link verifier (a beacon record's key must be the one its beacon
 * derives) and the development ptau (its one contribution is a beacon) must reproduce them bit for
 * bit; tests/ptau compares a whole development ptau with snarkjs's own beacon output, and
 * tests/core/verify-link-from-head.test.ts checks snarkjs's beacon contributions, so a drift cannot go unnoticed.
 */
import { hash } from 'node:crypto';
import { rngFromDigest, type SnarkjsRng } from './snarkjs-hash-to-g2.ts';

// hashToG2 lives in an isomorphic module of its own (the page's receipt check draws it too).
export { hashToG2, type SnarkjsRng } from './snarkjs-hash-to-g2.ts';

/** snarkjs misc.rngFromBeaconParams: the beacon SHA-256'd 2^iterationsExp times, then ChaCha. */
export function rngFromBeacon(beaconHash: Uint8Array, iterationsExp: number): SnarkjsRng {
  let digest: Uint8Array = beaconHash;
  // 2^n as a float is exact for any n a beacon can carry (≤ 63); the loop is the n that was asked.
  // crypto.hash: one call a hash, not three (about 1.4× faster here, where the loop is all the work).
  for (let i = 0, n = 2 ** iterationsExp; i < n; i++) digest = hash('sha256', digest, 'buffer');
  return rngFromDigest(digest);
}
