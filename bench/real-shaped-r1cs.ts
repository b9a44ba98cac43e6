/**
 * A real-shaped r1cs written directly, without circom: the constraints generate-circuit.ts's
 * realShapedCircuitSource describes (4, 3 and 3 terms in A, B and C with small coefficients, over
 * the last signals and the public inputs), in iden3's r1cs format, streamed to the file. For the
 * sizes circom2 takes too long or too much memory to compile (rs22: 4.2 million constraints, a
 * 1.6 GB r1cs). Deterministic: the same arguments write the same bytes.
 *
 * Signals: 0 is the constant one, 1..P the public inputs in[0..P-1], then s[0..n-1], n = constraints:
 *   constraint 0:     in[0] · in[1 % P] = s[0]
 *   constraint i + 1: (Σ_j<4 (j+1)·x_a(i, j)) · (in[(i+1) % P] + Σ_1≤j<3 (j+2)·x_b(i, j))
 *                     = s[i+1] + Σ_1≤j<3 (2j+1)·x_c(i, j)
 * where x_a(i, j) = s[i-j] if j ≤ i else in[(i+j) % P], x_b(i, j) = s[i-2j] if 2j ≤ i else
 * in[(i+3j) % P], x_c(i, j) = s[i-4-j] if 4+j ≤ i else in[(i+5j) % P], as the circom template has them.
 */
import { open } from 'node:fs/promises';
import { BN254_R } from '../core/crypto/bn254-moduli.ts';

const TERM_BYTES = 4 + 32;
/** Constraints per write. */
const BATCH = 1 << 15;

class Buffered {
  private buffer = Buffer.alloc(16 << 20);
  private used = 0;
  position = 0;

  constructor(private readonly handle: Awaited<ReturnType<typeof open>>) {}

  room(bytes: number): Promise<void> | undefined {
    return this.used + bytes > this.buffer.length ? this.flush() : undefined;
  }

  u32(n: number): void {
    this.used = this.buffer.writeUInt32LE(n, this.used);
  }

  u64(n: number): void {
    this.used = this.buffer.writeBigUInt64LE(BigInt(n), this.used);
  }

  /** A term: signal, then its (small) coefficient as 32 bytes little-endian. */
  term(signal: number, coefficient: number): void {
    this.u32(signal);
    this.buffer.fill(0, this.used, this.used + 32);
    this.buffer.writeUInt32LE(coefficient, this.used);
    this.used += 32;
  }

  bytes(b: Uint8Array): void {
    this.buffer.set(b, this.used);
    this.used += b.length;
  }

  async flush(): Promise<void> {
    let done = 0;
    while (done < this.used) {
      const { bytesWritten } = await this.handle.write(this.buffer, done, this.used - done, this.position + done);
      done += bytesWritten;
    }
    this.position += this.used;
    this.used = 0;
  }
}

/** Writes the real-shaped r1cs of `constraints` constraints and `publicInputs` public inputs to `file`. */
export async function writeRealShapedR1cs(
  file: string,
  constraints: number,
  publicInputs: number,
  onProgress?: (done: number, total: number) => void,
): Promise<void> {
  const P = publicInputs;
  const input = (k: number): number => 1 + (k % P);
  const s = (k: number): number => 1 + P + k;
  const nWires = 1 + P + constraints;
  const handle = await open(file, 'w');
  try {
    const out = new Buffered(handle);
    out.bytes(Buffer.from('r1cs'));
    out.u32(1);
    out.u32(3);
    // Section 1: the header.
    out.u32(1);
    out.u64(4 + 32 + 4 * 4 + 8 + 4);
    out.u32(32);
    let r = BN254_R;
    for (let i = 0; i < 8; i++, r >>= 32n) out.u32(Number(r & 0xffffffffn));
    out.u32(nWires);
    out.u32(0); // public outputs
    out.u32(P);
    out.u32(0); // private inputs
    out.u64(nWires); // labels
    out.u32(constraints);
    // Section 2: the constraints (10 terms each but the first, 3).
    out.u32(2);
    out.u64(3 * (4 + TERM_BYTES) + (constraints - 1) * (3 * 4 + 10 * TERM_BYTES));
    const row = (terms: Array<[number, number]>): void => {
      out.u32(terms.length);
      for (const [signal, coefficient] of terms) out.term(signal, coefficient);
    };
    await out.room(3 * (4 + TERM_BYTES));
    row([[input(0), 1]]);
    row([[input(1), 1]]);
    row([[s(0), 1]]);
    for (let i = 0; i < constraints - 1; i++) {
      if (i % BATCH === 0) {
        await out.room(BATCH * (3 * 4 + 10 * TERM_BYTES));
        onProgress?.(i, constraints);
      }
      const a: Array<[number, number]> = [];
      for (let j = 0; j < 4; j++) a.push([j <= i ? s(i - j) : input(i + j), j + 1]);
      const b: Array<[number, number]> = [[input(i + 1), 1]];
      for (let j = 1; j < 3; j++) b.push([2 * j <= i ? s(i - 2 * j) : input(i + 3 * j), j + 2]);
      const c: Array<[number, number]> = [[s(i + 1), 1]];
      for (let j = 1; j < 3; j++) c.push([4 + j <= i ? s(i - 4 - j) : input(i + 5 * j), 2 * j + 1]);
      row(a);
      row(b);
      row(c);
    }
    // Section 3: the wire → label map (the identity).
    await out.room(12);
    out.u32(3);
    out.u64(8 * nWires);
    for (let w = 0; w < nWires; w++) {
      await out.room(8);
      out.u64(w);
    }
    await out.flush();
    onProgress?.(constraints, constraints);
  } finally {
    await handle.close();
  }
}
