/**
 * Writes an r1cs file (iden3's binary format, what circom emits) from constraints given as data,
 * for tests that need coefficients or shapes no test circuit has: full-width, negative and
 * non-reduced coefficients, repeated and unused signals.
 */
import { writeFile } from 'node:fs/promises';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';

/** One matrix row: [signal, coefficient] pairs (any value below 2^256). */
export type R1csRow = Array<[number, bigint]>;
export interface R1csConstraint {
  a: R1csRow;
  b: R1csRow;
  c: R1csRow;
}

export interface R1csShape {
  nWires: number;
  publicInputs: number;
  constraints: R1csConstraint[];
}

function u32(n: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(n, 0);
  return out;
}

function u64(n: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(BigInt(n), 0);
  return out;
}

function le32(x: bigint): Buffer {
  const out = Buffer.alloc(32);
  for (let i = 0, v = x; i < 32; i++, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

function section(id: number, body: Buffer): Buffer {
  return Buffer.concat([u32(id), u64(body.length), body]);
}

export async function writeR1cs(file: string, shape: R1csShape): Promise<void> {
  const header = Buffer.concat([
    u32(32),
    le32(BN254_R),
    u32(shape.nWires),
    u32(0), // public outputs
    u32(shape.publicInputs),
    u32(shape.nWires - 1 - shape.publicInputs), // private inputs
    u64(shape.nWires), // labels
    u32(shape.constraints.length),
  ]);
  const row = (terms: R1csRow): Buffer =>
    Buffer.concat([u32(terms.length), ...terms.flatMap(([s, coef]) => [u32(s), le32(coef)])]);
  const constraints = Buffer.concat(shape.constraints.flatMap((c) => [row(c.a), row(c.b), row(c.c)]));
  const labels = Buffer.concat(Array.from({ length: shape.nWires }, (_, i) => u64(i)));
  await writeFile(
    file,
    Buffer.concat([
      Buffer.from('r1cs'),
      u32(1),
      u32(3),
      section(1, header),
      section(2, constraints),
      section(3, labels),
    ]),
  );
}
