/**
 * The reduced-radix base field g1-scale.c walks in (core/kernel/bn254-fq-rr.h: 9 limbs of 29 bits,
 * R = 2^261, values anywhere in [0, 2q)) against BigInt arithmetic, built with the kernel's flags:
 * every operation on random values across the whole lazy range and on its edges (0, 1, q - 1, q,
 * 2q - 1), each result in range with normalised limbs (the unreduced sums and differences below
 * 4q, and the product below 2q from inputs up to 4q), and the conversions from and back to the
 * key's layout exact (fully reduced, byte for byte), and the tests the MSM compares points with
 * (rr_canon, rr_eq, rr_is_zero) deciding on the residue, whichever of its two representatives is held.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildKernelWasm } from '../../core/kernel/build-kernel-wasm.ts';
import { BN254_Q as q } from '../../core/kernel/g1-scale-chain.ts';

interface FieldExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  mul(r: number, a: number, b: number): void;
  add(r: number, a: number, b: number): void;
  sub(r: number, a: number, b: number): void;
  add_lazy(r: number, a: number, b: number): void;
  sub_lazy(r: number, a: number, b: number): void;
  neg(r: number, a: number): void;
  from_key(r: number, key: number): void;
  to_key(key: number, a: number): void;
  inv(r: number, a: number): void;
  one(r: number): void;
  canon(r: number, a: number): void;
  eq(a: number, b: number): number;
  is_zero(a: number): number;
}

const LIMBS = 9;
const BITS = 29n;
let field: FieldExports;
let A: number, B: number, R: number;

const mod = (v: bigint): bigint => ((v % q) + q) % q;
function pow(base: bigint, e: bigint): bigint {
  let result = 1n;
  for (let b = mod(base); e > 0n; e >>= 1n, b = (b * b) % q) if (e & 1n) result = (result * b) % q;
  return result;
}
const R_INV = pow(1n << 261n, q - 2n);
const KEY_R = 1n << 256n;
const KEY_R_INV = pow(KEY_R, q - 2n);

function random(bound: bigint): bigint {
  return BigInt(`0x${randomBytes(40).toString('hex')}`) % bound;
}

function words(): Uint32Array {
  return new Uint32Array(field.memory.buffer);
}

function put(at: number, value: bigint): void {
  for (let i = 0; i < LIMBS; i++) words()[at / 4 + i] = Number((value >> (BITS * BigInt(i))) & ((1n << BITS) - 1n));
}

/** The value at `at`, after checking it is below `bound` (the lazy range's 2q) with every limb below 2^29. */
function get(at: number, what: string, bound = 2n * q): bigint {
  let value = 0n;
  for (let i = LIMBS - 1; i >= 0; i--) {
    const limb = words()[at / 4 + i]!;
    assert.ok(limb < 2 ** 29, `${what}: limb ${i} is not normalised`);
    value = (value << BITS) | BigInt(limb);
  }
  assert.ok(value < bound, `${what}: ${value} is not below ${bound === 2n * q ? '2q' : bound}`);
  return value;
}

function putKey(at: number, value: bigint): void {
  for (let i = 0; i < 8; i++) words()[at / 4 + i] = Number((value >> BigInt(32 * i)) & 0xffffffffn);
}

function getKey(at: number): bigint {
  let value = 0n;
  for (let i = 7; i >= 0; i--) value = (value << 32n) | BigInt(words()[at / 4 + i]!);
  return value;
}

/** Values across the whole lazy range [0, 2q), its edges first. */
function lazyValues(count: number): bigint[] {
  const edges = [0n, 1n, 2n, q - 1n, q, q + 1n, 2n * q - 2n, 2n * q - 1n, (1n << 253n) - 1n];
  return [...edges, ...Array.from({ length: count }, () => random(2n * q))];
}

before(() => {
  const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reduced-radix-field.c');
  const instance = new WebAssembly.Instance(
    new WebAssembly.Module(new Uint8Array(buildKernelWasm(undefined, [source]))),
  );
  field = instance.exports as unknown as FieldExports;
  A = Math.ceil(Number(field.__heap_base.value) / 64) * 64;
  B = A + 64;
  R = B + 64;
});

describe('reduced-radix base field', () => {
  it('multiplies, adds, subtracts and negates like BigInt across the lazy range', () => {
    const values = lazyValues(3000);
    for (const [n, a] of values.entries()) {
      const b = values[(n * 7 + 3) % values.length]!;
      put(A, a);
      put(B, b);
      field.mul(R, A, B);
      assert.equal(mod(get(R, 'mul')), mod(a * b * R_INV), `mul ${a} ${b}`);
      field.mul(R, A, A);
      assert.equal(mod(get(R, 'square')), mod(a * a * R_INV), `square ${a}`);
      field.add(R, A, B);
      assert.equal(mod(get(R, 'add')), mod(a + b), `add ${a} ${b}`);
      field.sub(R, A, B);
      assert.equal(mod(get(R, 'sub')), mod(a - b), `sub ${a} ${b}`);
      field.neg(R, A);
      assert.equal(mod(get(R, 'neg')), mod(-a), `neg ${a}`);
      field.add_lazy(R, A, B);
      assert.equal(mod(get(R, 'add_lazy', 4n * q)), mod(a + b), `add_lazy ${a} ${b}`);
      field.sub_lazy(R, A, B);
      assert.equal(mod(get(R, 'sub_lazy', 4n * q)), mod(a - b), `sub_lazy ${a} ${b}`);
    }
  });

  it('multiplies unreduced inputs, anywhere below 4q, into the lazy range', () => {
    const values = [4n * q - 1n, 3n * q, 2n * q, ...lazyValues(3000).map((v) => v * 2n)];
    for (const [n, a] of values.entries()) {
      const b = values[(n * 5 + 1) % values.length]!;
      put(A, a);
      put(B, b);
      field.mul(R, A, B);
      assert.equal(mod(get(R, 'mul')), mod(a * b * R_INV), `mul ${a} ${b}`);
    }
  });

  it('converts from the key layout and back exactly, fully reduced, from anywhere in the lazy range', () => {
    for (const a of [0n, 1n, q - 1n, ...Array.from({ length: 3000 }, () => random(q))]) {
      putKey(A, a);
      field.from_key(R, A);
      assert.equal(mod(get(R, 'from_key')), mod(a * KEY_R_INV * (1n << 261n)), `from_key ${a}`);
      field.to_key(B, R);
      assert.equal(getKey(B), a, `round trip ${a}`);
    }
    for (const a of lazyValues(3000)) {
      put(A, a);
      field.to_key(B, A);
      assert.equal(getKey(B), mod(a * R_INV * KEY_R), `to_key ${a}`);
    }
  });

  it('compares residues, not representatives: v and v + q are equal, and q is zero', () => {
    field.one(R);
    assert.equal(get(R, 'one'), mod(1n << 261n));
    for (const a of lazyValues(3000)) {
      put(A, a);
      field.canon(R, A);
      assert.equal(get(R, 'canon', q), mod(a), `canon ${a}`);
      assert.equal(field.is_zero(A), mod(a) === 0n ? 1 : 0, `is_zero ${a}`);
      const twin = a < q ? a + q : a - q;
      for (const b of [a, twin, random(2n * q), (a + 1n) % (2n * q), mod(a) === 0n ? 1n : mod(a) - 1n]) {
        put(B, b);
        assert.equal(field.eq(A, B), mod(a) === mod(b) ? 1 : 0, `eq ${a} ${b}`);
      }
    }
  });

  it('inverts: a times its inverse is one', () => {
    const one = mod(1n << 261n);
    for (const a of [1n, q - 1n, q + 1n, 2n * q - 1n, ...Array.from({ length: 20 }, () => 1n + random(2n * q - 1n))]) {
      if (mod(a) === 0n) continue;
      put(A, a);
      field.inv(R, A);
      const inverse = get(R, 'inv');
      assert.equal(mod(a * inverse * R_INV), one, `inverse of ${a}`);
    }
  });
});
