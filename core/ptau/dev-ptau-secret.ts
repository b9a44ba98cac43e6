/**
 * The key of a development ptau's one contribution, recomputed from its public beacon exactly as
 * snarkjs's `powersoftau beacon` derives it (misc.rngFromBeaconParams + keypair.createPTauKey):
 * the beacon hash is SHA-256'd 2^exp times, the result seeds ChaCha, tau, alpha and beta are the
 * first three Fr draws, then each one's proof-of-knowledge points are drawn in turn (g1_s from the
 * same stream, g2_sp hashed from the challenge, g1_s and g1_sx). snarkjs does not export
 * createPTauKey, hence the copy (its streams come from crypto/snarkjs-rng.ts); tests/ptau compares
 * the whole file with snarkjs's own beacon output, so a drift in snarkjs cannot go unnoticed.
 */
import { createHash } from 'node:crypto';
import type { Bn128Curve } from 'ffjavascript';
import { hashToG2, rngFromBeacon } from '../crypto/snarkjs-rng.ts';

/** One of tau, alpha, beta: the secret (Fr, Montgomery form) and its public proof of knowledge. */
export interface PtauKeyPart {
  prvKey: Uint8Array;
  /** Affine points, Montgomery form. */
  g1_s: Uint8Array;
  g1_sx: Uint8Array;
  g2_spx: Uint8Array;
}

export interface DevPtauKey {
  tau: PtauKeyPart;
  alpha: PtauKeyPart;
  beta: PtauKeyPart;
}

/** snarkjs keypair.hashToG2 of blake2b(personalization ‖ challenge ‖ g1_s ‖ g1_sx), uncompressed. */
function g2sp(
  curve: Bn128Curve,
  personalization: number,
  challenge: Uint8Array,
  g1s: Uint8Array,
  g1sx: Uint8Array,
): Uint8Array {
  const g1 = curve.G1;
  const toUncompressed = g1.toUncompressed as (p: Uint8Array) => Uint8Array;
  const hash = createHash('blake2b512')
    .update(Uint8Array.of(personalization))
    .update(challenge)
    .update(toUncompressed.call(g1, g1s))
    .update(toUncompressed.call(g1, g1sx))
    .digest();
  return hashToG2(curve, hash);
}

/**
 * The beacon contribution's key for `challengeHash` (the hash of the empty accumulator). The
 * secret itself does not depend on the challenge; the proofs of knowledge do.
 */
export function devPtauKey(
  curve: Bn128Curve,
  beaconHex: string,
  iterationsExp: number,
  challengeHash: Uint8Array,
): DevPtauKey {
  // 2^32 and more SHA-256 rounds would take hours; a development beacon never needs them.
  if (iterationsExp >= 32) throw new RangeError('beacon iteration exponents of 32 and more are not supported here');
  const rng = rngFromBeacon(Buffer.from(beaconHex, 'hex'), iterationsExp);
  const Fr = curve.Fr;
  const g1 = curve.G1;
  const g2 = curve.G2;
  const secrets = [Fr.fromRng(rng), Fr.fromRng(rng), Fr.fromRng(rng)] as const;
  const part = (prvKey: Uint8Array, personalization: number): PtauKeyPart => {
    const g1_s = g1.toAffine(g1.fromRng(rng));
    const g1_sx = g1.toAffine(g1.timesFr(g1_s, prvKey));
    const sp = g2.toAffine(g2sp(curve, personalization, challengeHash, g1_s, g1_sx));
    return { prvKey, g1_s, g1_sx, g2_spx: g2.toAffine(g2.timesFr(sp, prvKey)) };
  };
  // Drawn in this order from the one stream, as createPTauKey does.
  const tau = part(secrets[0], 0);
  const alpha = part(secrets[1], 1);
  const beta = part(secrets[2], 2);
  return { tau, alpha, beta };
}
