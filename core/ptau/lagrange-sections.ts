/**
 * The phase-2 sections (12–15) of a ptau whose secret is known, written straight from the secret
 * instead of by snarkjs's preparePhase2 (a group inverse FFT per power: n·log n full scalar
 * multiplications, hours at power 18). Layout as preparePhase2 writes it: each section holds, for
 * every power p = 0..power (and p = power+1 for tauG1), the 2^p points L^(p)_j(tau)·G, where L^(p)_j
 * is the Lagrange basis of the 2^p-th roots of unity, scaled by alpha (14) or beta (15).
 *
 * preparePhase2 computes ifft(tau^0·G, …, tau^(n-1)·G), i.e. (1/n)·Σ_i ω^(-ij)·tau^i·G, which is
 * L_j(tau)·G = (tau^n − 1)/n · ω^j/(tau − ω^j) · G. For tauG1 at p = power+1 the file holds only
 * n−1 powers (the last is taken as zero), so that one power drops the term i = n−1:
 * L_j(tau) − tau^(n−1)·ω^j/n. Scalars are computed in Fr, in chunks of LAGRANGE_CHUNK points (one
 * batch inversion per chunk), then multiplied into the generators by generatorTimesFr and written,
 * so memory stays the chunk's whatever the power.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Bn128Curve } from 'ffjavascript';
import { generatorTimesFr } from './fixed-base-times.ts';

const FR_BYTES = 32;

/** Points per chunk of a section: what is held at once (scalars and points), whatever the power. */
const LAGRANGE_CHUNK = 1 << 16;

/**
 * L^(p)_j(tau) for j = first..first+count−1, as 32-byte Fr elements back to back (one batch
 * inversion for the chunk). With `dropLastPower`, the basis evaluated on tau^0..tau^(n−2) only (see
 * the module comment).
 */
export function lagrangeScalars(
  curve: Bn128Curve,
  tau: Uint8Array,
  p: number,
  first: number,
  count: number,
  dropLastPower = false,
): Uint8Array {
  const Fr = curve.Fr;
  const n = 2 ** p;
  const omega = Fr.w[p];
  if (!omega) throw new RangeError(`no 2^${p}-th root of unity in Fr`);
  let tauN = tau;
  for (let i = 0; i < p; i++) tauN = Fr.square(tauN);
  const nInv = Fr.inv(Fr.e(n));
  const scale = Fr.mul(Fr.sub(tauN, Fr.one), nInv);

  // Batch inversion of d_j = tau − ω^j: prefix products, one inversion, then walk back.
  const roots = new Uint8Array(count * FR_BYTES);
  const prefix = new Uint8Array(count * FR_BYTES);
  let root = first === 0 ? Fr.one : Fr.exp(omega, first);
  let acc = Fr.one;
  for (let k = 0; k < count; k++) {
    roots.set(root, k * FR_BYTES);
    const d = Fr.sub(tau, root);
    if (Fr.isZero(d)) throw new RangeError('tau is a root of unity; pick another beacon');
    acc = Fr.mul(acc, d);
    prefix.set(acc, k * FR_BYTES);
    root = Fr.mul(root, omega);
  }
  let invAcc = Fr.inv(acc);
  const out = new Uint8Array(count * FR_BYTES);
  // tau^(n−1)·ω^j/n, subtracted when the last power is missing.
  const dropScale = dropLastPower ? Fr.mul(Fr.mul(tauN, Fr.inv(tau)), nInv) : undefined;
  const at = (bytes: Uint8Array, k: number): Uint8Array => bytes.subarray(k * FR_BYTES, (k + 1) * FR_BYTES);
  for (let k = count - 1; k >= 0; k--) {
    const invD = k > 0 ? Fr.mul(invAcc, at(prefix, k - 1)) : invAcc;
    const rootK = at(roots, k);
    invAcc = Fr.mul(invAcc, Fr.sub(tau, rootK));
    let l = Fr.mul(Fr.mul(scale, rootK), invD);
    if (dropScale) l = Fr.sub(l, Fr.mul(dropScale, rootK));
    out.set(l, k * FR_BYTES);
  }
  return out;
}

function timesEach(curve: Bn128Curve, scalars: Uint8Array, factor: Uint8Array): Uint8Array {
  const Fr = curve.Fr;
  const out = new Uint8Array(scalars.byteLength);
  for (let i = 0; i < scalars.byteLength; i += FR_BYTES) out.set(Fr.mul(scalars.subarray(i, i + FR_BYTES), factor), i);
  return out;
}

/** The secret scalars (Fr, Montgomery form). */
export interface PtauSecret {
  tau: Uint8Array;
  alpha: Uint8Array;
  beta: Uint8Array;
}

export interface LagrangeProgress {
  (section: number, power: number): void;
}

/**
 * Appends sections 12–15 at `position` of `handle`; returns the position after them. The caller
 * owns the file header (its section count must say 11).
 */
export async function writeLagrangeSections(
  handle: FileHandle,
  position: number,
  curve: Bn128Curve,
  power: number,
  secret: PtauSecret,
  onProgress?: LagrangeProgress,
): Promise<number> {
  const g1 = curve.G1;
  const g2 = curve.G2;
  const g1Size = g1.F.n8 * 2;
  const g2Size = g2.F.n8 * 2;
  const sections: Array<{ id: number; group: 'G1' | 'G2'; factor?: Uint8Array; extraPower: boolean }> = [
    { id: 12, group: 'G1', extraPower: true },
    { id: 13, group: 'G2', extraPower: false },
    { id: 14, group: 'G1', factor: secret.alpha, extraPower: false },
    { id: 15, group: 'G1', factor: secret.beta, extraPower: false },
  ];
  let pos = position;
  const write = async (bytes: Uint8Array): Promise<void> => {
    let written = 0;
    while (written < bytes.byteLength) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.byteLength - written, pos + written);
      written += bytesWritten;
    }
    pos += bytes.byteLength;
  };
  for (const section of sections) {
    const lastPower = section.extraPower ? power + 1 : power;
    const pointSize = section.group === 'G1' ? g1Size : g2Size;
    const header = Buffer.alloc(12);
    header.writeUInt32LE(section.id, 0);
    header.writeBigUInt64LE(BigInt((2 ** (lastPower + 1) - 1) * pointSize), 4);
    await write(header);
    for (let p = 0; p <= lastPower; p++) {
      onProgress?.(section.id, p);
      // In chunks, so that memory does not grow with the power (a 2^23-point power held whole is GBs).
      for (let first = 0; first < 2 ** p; first += LAGRANGE_CHUNK) {
        const count = Math.min(LAGRANGE_CHUNK, 2 ** p - first);
        let scalars = lagrangeScalars(curve, secret.tau, p, first, count, p > power);
        if (section.factor) scalars = timesEach(curve, scalars, section.factor);
        await write(await generatorTimesFr(curve, section.group, scalars));
      }
    }
  }
  return pos;
}
