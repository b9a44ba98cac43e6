/** BN254's generators, affine, in the zkey layout (Montgomery form, little-endian; G2: x.c0, x.c1, y.c0, y.c1). */
import { BN254_Q } from '../crypto/bn254-moduli.ts';

/** Little-endian bytes of a field element in Montgomery form (x·2^256 mod q), as zkeys store coordinates. */
function montgomery(x: bigint): Uint8Array {
  let v = (x << 256n) % BN254_Q;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

export const G1_GENERATOR: Uint8Array = concat([montgomery(1n), montgomery(2n)]);
export const G2_GENERATOR: Uint8Array = concat(
  [
    10857046999023057135944570762232829481370756359578518086990519993285655852781n,
    11559732032986387107991004021392285783925812861821192530917403151452391805634n,
    8495653923123431417604973247489272438418190587263600148770280649306958101930n,
    4082367875863433681332203403145435568316851327593401208105741076214120093531n,
  ].map(montgomery),
);
