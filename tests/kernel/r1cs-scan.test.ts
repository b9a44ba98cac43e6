/**
 * The kernel's r1cs pass (r1cs-scan.c) against the same sums in BigInt arithmetic: random
 * constraints with coefficients of every size (0, 1, r − 1, values at and above r, which must be
 * reduced), the key's coefficient entries compared (a changed one is named by its constraint), and
 * a term naming a signal beyond the circuit's refused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { COEFFICIENT_ENTRY_BYTES, R1csScanKernel } from '../../core/kernel/r1cs-scan.ts';

const N8 = 32;
const R = 1n << 256n;

function le(value: bigint, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

function random(bits: number): bigint {
  return BigInt(`0x${randomBytes(Math.ceil(bits / 8)).toString('hex')}`) & ((1n << BigInt(bits)) - 1n);
}

const SPECIAL = [0n, 1n, BN254_R - 1n, BN254_R, BN254_R + 5n, R - 1n];

interface Term {
  signal: number;
  coefficient: bigint;
}

function circuit(nConstraints: number, nWires: number): Term[][][] {
  return Array.from({ length: nConstraints }, () =>
    Array.from({ length: 3 }, () =>
      Array.from({ length: Math.floor(Math.random() * 5) }, () => ({
        signal: Math.floor(Math.random() * nWires),
        coefficient: Math.random() < 0.3 ? SPECIAL[Math.floor(Math.random() * SPECIAL.length)]! : random(256),
      })),
    ),
  );
}

function r1csBytes(constraints: Term[][][]): Buffer {
  const parts: Buffer[] = [];
  for (const rows of constraints) {
    for (const terms of rows) {
      parts.push(le(BigInt(terms.length), 4));
      for (const { signal, coefficient } of terms) parts.push(le(BigInt(signal), 4), le(coefficient, N8));
    }
  }
  return Buffer.concat(parts);
}

/** Section-4 entries as snarkjs writes them: A's then B's terms of each constraint, a·R² mod r. */
function entries(constraints: Term[][][], first: number): Buffer {
  const parts: Buffer[] = [];
  constraints.forEach((rows, k) => {
    for (const matrix of [0, 1]) {
      for (const { signal, coefficient } of rows[matrix]!) {
        parts.push(
          le(BigInt(matrix), 4),
          le(BigInt(first + k), 4),
          le(BigInt(signal), 4),
          le(((((coefficient % BN254_R) * R) % BN254_R) * R) % BN254_R, N8),
        );
      }
    }
  });
  return Buffer.concat(parts);
}

describe('r1cs pass in the kernel', () => {
  const nWires = 50;
  const rho = Array.from({ length: nWires }, () => random(128));
  const rhoBytes = Buffer.concat(rho.map((value) => le(value, 16)));
  const sigma: [bigint, bigint] = [random(128), random(128)];

  it('computes u, v, w and w + σ1·u + σ2·v as BigInt arithmetic does, and accepts the right coefficients', async () => {
    const kernel = await R1csScanKernel.instantiate(rhoBytes, 16, nWires, sigma);
    const constraints = circuit(200, nWires);
    const first = 7;
    const result = kernel.scan(r1csBytes(constraints), constraints.length, first, entries(constraints, first));
    assert.ok(!('kind' in result), JSON.stringify(result));
    constraints.forEach((rows, k) => {
      const [u, v, w] = rows.map((terms) =>
        terms.reduce((sum, { signal, coefficient }) => (sum + rho[signal]! * coefficient) % BN254_R, 0n),
      );
      const combined = (w! + sigma[0] * u! + sigma[1] * v!) % BN254_R;
      for (const [name, value] of [
        ['u', u],
        ['v', v],
        ['w', w],
        ['combined', combined],
      ] as const) {
        assert.deepEqual(
          Buffer.from(result[name].subarray(k * N8, (k + 1) * N8)),
          le(value!, N8),
          `${name} of constraint ${k}`,
        );
      }
    });
  });

  it('names the constraint of a changed coefficient entry, and of a signal beyond the circuit', async () => {
    const kernel = await R1csScanKernel.instantiate(rhoBytes, 16, nWires, sigma);
    const constraints = circuit(100, nWires);
    constraints[60]![1] = [{ signal: 3, coefficient: 5n }];
    const bytes = r1csBytes(constraints);
    const good = entries(constraints, 0);
    // The entry of constraint 60's B term: after every A and B entry of constraints 0–59 and 60's A ones.
    const before =
      constraints.slice(0, 60).reduce((n, rows) => n + rows[0]!.length + rows[1]!.length, 0) +
      constraints[60]![0]!.length;
    const changed = Buffer.from(good);
    const at = before * COEFFICIENT_ENTRY_BYTES + 12;
    changed[at] = changed[at]! ^ 1;
    assert.deepEqual(kernel.scan(bytes, constraints.length, 0, changed), {
      kind: 'coefficient_mismatch',
      constraint: 60,
    });
    assert.ok(!('kind' in kernel.scan(bytes, constraints.length, 0, undefined)), 'not compared without entries');

    constraints[80]![2] = [{ signal: nWires, coefficient: 1n }];
    assert.deepEqual(kernel.scan(r1csBytes(constraints), constraints.length, 0, undefined), {
      kind: 'signal_out_of_range',
      constraint: 80,
    });
  });

  it('refuses scalars that do not match the signals', async () => {
    await assert.rejects(R1csScanKernel.instantiate(rhoBytes.subarray(16), 16, nWires, sigma), RangeError);
  });
});
