/**
 * The contribution hash of one MPC record, exactly as snarkjs computes and prints it
 * ("Contribution Hash" of `zkey contribute`, the per-contribution lines of `zkey verify`):
 * BLAKE2b-512 over deltaAfter, g1_s, g1_sx (G1, uncompressed big-endian), g2_spx (G2) and the
 * record's transcript digest. Contributors compare it with what their own client printed.
 */
import { createHash } from 'node:crypto';
import type { Bn128Curve } from 'ffjavascript';
import type { ContributionRecord } from './zkey-file.ts';

function uncompressed(curve: Bn128Curve, group: 'G1' | 'G2', lem: Buffer): Uint8Array {
  const G = curve[group];
  const out = new Uint8Array(G.F.n8 * 2);
  G.toRprUncompressed(out, 0, G.fromRprLEM(lem, 0));
  return out;
}

export function contributionHash(curve: Bn128Curve, record: ContributionRecord): string {
  return createHash('blake2b512')
    .update(uncompressed(curve, 'G1', record.deltaAfter))
    .update(uncompressed(curve, 'G1', record.g1S))
    .update(uncompressed(curve, 'G1', record.g1Sx))
    .update(uncompressed(curve, 'G2', record.g2Spx))
    .update(record.transcript)
    .digest('hex');
}
