/**
 * The verification key of a key the receipt check read (its header, section 2, and IC, section 3,
 * both held to the transcript's section hashes), in snarkjs's `zkey export verificationkey` form:
 * affine coordinates as decimal strings, G2 coordinates as [c0, c1]. What a check of the deployed
 * verifier against this key needs (α1, β2, γ2, δ2, every IC point), from a few kilobytes rather
 * than the published key or vkey. No curve library: the page can run it.
 */
import { g1Uncompressed, g2Uncompressed } from './uncompressed-points.ts';
import { DELTA1_AT, HEADER_BYTES } from './zkey-history.ts';

type G1 = [string, string];
type G2 = [[string, string], [string, string]];

export interface VerificationKeyConstants {
  nPublic: number;
  vk_alpha_1: G1;
  vk_beta_2: G2;
  vk_gamma_2: G2;
  vk_delta_2: G2;
  IC: G1[];
}

const G1_BYTES = 64;
const G2_BYTES = 128;
/** Where α1, β2 and γ2 start in the header (after the fields and sizes, 84 bytes, and α1, β1). */
const ALPHA1_AT = 84;
const BETA2_AT = ALPHA1_AT + 2 * G1_BYTES;
const GAMMA2_AT = BETA2_AT + G2_BYTES;
const DELTA2_AT = DELTA1_AT + G1_BYTES;

const decimal = (bigEndian: Uint8Array): string =>
  bigEndian.reduce((value, byte) => (value << 8n) | BigInt(byte), 0n).toString();

function g1(stored: Uint8Array): G1 {
  const point = g1Uncompressed(stored);
  return [decimal(point.subarray(0, 32)), decimal(point.subarray(32))];
}

function g2(stored: Uint8Array): G2 {
  // ffjavascript's uncompressed G2: x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0.
  const p = g2Uncompressed(stored);
  const part = (at: number): string => decimal(p.subarray(at, at + 32));
  return [
    [part(32), part(0)],
    [part(96), part(64)],
  ];
}

/** The verification key's constants from the header (660 bytes, as stored) and IC (as stored). */
export function verificationKeyConstants(header: Uint8Array, ic: Uint8Array): VerificationKeyConstants {
  if (header.length !== HEADER_BYTES || ic.length % G1_BYTES !== 0 || ic.length === 0)
    throw new RangeError('not a BN254 Groth16 header and IC section');
  const at = (offset: number, length: number): Uint8Array => header.subarray(offset, offset + length);
  return {
    nPublic: ic.length / G1_BYTES - 1,
    vk_alpha_1: g1(at(ALPHA1_AT, G1_BYTES)),
    vk_beta_2: g2(at(BETA2_AT, G2_BYTES)),
    vk_gamma_2: g2(at(GAMMA2_AT, G2_BYTES)),
    vk_delta_2: g2(at(DELTA2_AT, G2_BYTES)),
    IC: Array.from({ length: ic.length / G1_BYTES }, (_, i) => g1(ic.subarray(i * G1_BYTES, (i + 1) * G1_BYTES))),
  };
}
