/**
 * The four-lane field the SIMD walk runs in (core/kernel/bn254-fq-rr-x4.h), built with the SIMD
 * module's flags: every operation, on four different values in its four lanes, gives in each lane
 * exactly the limbs the scalar field of bn254-fq-rr.h gives for that lane's values (so the SIMD walk
 * computes what the scalar walk does), and the right residue in range by BigInt: across the lazy
 * range [0, 2q) and its edges, products of unreduced inputs up to 4q (and of a triple below 6q by a
 * value below 2q), the squaring equal to the product of a value by itself, a double subtraction equal
 * to two, and the entry and exit conversions from and to the key's layout.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildKernelWasm, SIMD_CLANG_ARGS } from '../../core/kernel/build-kernel-wasm.ts';
import { BN254_Q as q } from '../../core/kernel/g1-scale-chain.ts';

type Binary = (r: number, a: number, b: number) => void;
type Unary = (r: number, a: number) => void;

interface X4Exports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  init(): void;
  x4_mul: Binary;
  x4_sqr: Unary;
  x4_add: Binary;
  x4_sub: Binary;
  x4_add_lazy: Binary;
  x4_sub_lazy: Binary;
  x4_neg: Unary;
  x4_sub2: (r: number, a: number, b: number, c: number) => void;
  x4_triple_lazy: Unary;
  x4_from_keys: Unary;
  x4_to_keys: Unary;
  mul: Binary;
  add: Binary;
  sub: Binary;
  add_lazy: Binary;
  sub_lazy: Binary;
  neg: Unary;
}

const LIMBS = 9;
const BITS = 29n;
const LANES = 4;
let field: X4Exports;
/** Four-lane operands and result (144 bytes each), a scalar operand pair and result (36 bytes), keys. */
let VA: number, VB: number, VC: number, VR: number, SA: number, SB: number, SR: number, KEYS: number;

const mod = (v: bigint): bigint => ((v % q) + q) % q;
function pow(base: bigint, e: bigint): bigint {
  let result = 1n;
  for (let b = mod(base); e > 0n; e >>= 1n, b = (b * b) % q) if (e & 1n) result = (result * b) % q;
  return result;
}
const R_INV = pow(1n << 261n, q - 2n);
const KEY_R = 1n << 256n;

function random(bound: bigint): bigint {
  return BigInt(`0x${randomBytes(40).toString('hex')}`) % bound;
}

const words = (): Uint32Array => new Uint32Array(field.memory.buffer);

function limbsOf(value: bigint): number[] {
  return Array.from({ length: LIMBS }, (_, i) => Number((value >> (BITS * BigInt(i))) & ((1n << BITS) - 1n)));
}

function putLanes(at: number, values: bigint[]): void {
  values.forEach((value, lane) => limbsOf(value).forEach((limb, i) => (words()[at / 4 + 4 * i + lane] = limb)));
}

function laneLimbs(at: number, lane: number): number[] {
  return Array.from({ length: LIMBS }, (_, i) => words()[at / 4 + 4 * i + lane]!);
}

function scalarLimbs(at: number): number[] {
  return Array.from(words().subarray(at / 4, at / 4 + LIMBS));
}

/** The value of limbs, after checking each limb is normalised and the value below `bound`. */
function valueOf(limbs: number[], what: string, bound: bigint): bigint {
  let value = 0n;
  for (let i = LIMBS - 1; i >= 0; i--) {
    assert.ok(limbs[i]! < 2 ** 29, `${what}: limb ${i} is not normalised`);
    value = (value << BITS) | BigInt(limbs[i]!);
  }
  assert.ok(value < bound, `${what}: ${value} is not below ${bound}`);
  return value;
}

/** Values across the lazy range [0, 2q), its edges first. */
function lazyValues(count: number): bigint[] {
  const edges = [0n, 1n, 2n, q - 1n, q, q + 1n, 2n * q - 2n, 2n * q - 1n, (1n << 253n) - 1n];
  return [...edges, ...Array.from({ length: count }, () => random(2n * q))];
}

/** The values in fours (each vector's lanes), cycling so every value is in some lane. */
function quads(values: bigint[], shift: number): bigint[][] {
  const out: bigint[][] = [];
  for (let n = 0; n < values.length; n += LANES) {
    out.push(Array.from({ length: LANES }, (_, lane) => values[(n + lane * shift + lane) % values.length]!));
  }
  return out;
}

/**
 * Runs the four-lane operation on (as, bs) and, lane by lane, the scalar one on the same values:
 * the limbs must be equal, and the value in range with the residue `expect` gives.
 */
function checkAgainstScalar(
  what: string,
  as: bigint[],
  bs: bigint[],
  x4: (r: number, a: number, b: number) => void,
  scalar: (r: number, a: number, b: number) => void,
  expect: (a: bigint, b: bigint) => bigint,
  bound = 2n * q,
): void {
  putLanes(VA, as);
  putLanes(VB, bs);
  x4(VR, VA, VB);
  for (let lane = 0; lane < LANES; lane++) {
    const [a, b] = [as[lane]!, bs[lane]!];
    words().set(limbsOf(a), SA / 4);
    words().set(limbsOf(b), SB / 4);
    scalar(SR, SA, SB);
    const mine = laneLimbs(VR, lane);
    assert.deepEqual(mine, scalarLimbs(SR), `${what} lane ${lane}: ${a}, ${b}`);
    assert.equal(mod(valueOf(mine, what, bound)), mod(expect(a, b)), `${what} lane ${lane}: ${a}, ${b}`);
  }
}

before(() => {
  const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reduced-radix-x4.c');
  const bytes = new Uint8Array(buildKernelWasm(undefined, [source], SIMD_CLANG_ARGS));
  field = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as unknown as X4Exports;
  field.init();
  VA = Math.ceil(Number(field.__heap_base.value) / 64) * 64;
  VB = VA + 160;
  VC = VB + 160;
  VR = VC + 160;
  SA = VR + 160;
  SB = SA + 64;
  SR = SB + 64;
  KEYS = SR + 64;
});

describe('four-lane reduced-radix field (SIMD)', () => {
  it('each lane multiplies, squares, adds, subtracts, negates as the scalar field does, across the lazy range', () => {
    const values = lazyValues(2000);
    const left = quads(values, 0);
    const right = quads(values, 7);
    for (const [n, as] of left.entries()) {
      const bs = right[n]!;
      checkAgainstScalar('mul', as, bs, field.x4_mul, field.mul, (a, b) => a * b * R_INV);
      checkAgainstScalar(
        'sqr',
        as,
        as,
        (r, a) => field.x4_sqr(r, a),
        field.mul,
        (a) => a * a * R_INV,
      );
      checkAgainstScalar('add', as, bs, field.x4_add, field.add, (a, b) => a + b);
      checkAgainstScalar('sub', as, bs, field.x4_sub, field.sub, (a, b) => a - b);
      checkAgainstScalar(
        'neg',
        as,
        as,
        (r, a) => field.x4_neg(r, a),
        field.neg,
        (a) => -a,
      );
      checkAgainstScalar('add_lazy', as, bs, field.x4_add_lazy, field.add_lazy, (a, b) => a + b, 4n * q);
      checkAgainstScalar('sub_lazy', as, bs, field.x4_sub_lazy, field.sub_lazy, (a, b) => a - b, 4n * q);
    }
  });

  it('subtracts two values at once as two subtractions do, limb for limb, across the lazy range', () => {
    const values = lazyValues(2000);
    const [left, middle, right] = [quads(values, 0), quads(values, 7), quads(values, 3)];
    for (const [n, as] of left.entries()) {
      const [bs, cs] = [middle[n]!, right[n]!];
      putLanes(VA, as);
      putLanes(VB, bs);
      putLanes(VC, cs);
      field.x4_sub2(VR, VA, VB, VC);
      for (let lane = 0; lane < LANES; lane++) {
        const [a, b, c] = [as[lane]!, bs[lane]!, cs[lane]!];
        words().set(limbsOf(a), SA / 4);
        words().set(limbsOf(b), SB / 4);
        field.sub(SR, SA, SB);
        words().set(limbsOf(c), SB / 4);
        field.sub(SR, SR, SB);
        const mine = laneLimbs(VR, lane);
        assert.deepEqual(mine, scalarLimbs(SR), `sub2 lane ${lane}: ${a}, ${b}, ${c}`);
        assert.equal(mod(valueOf(mine, 'sub2', 2n * q)), mod(a - b - c), `sub2 lane ${lane}: ${a}, ${b}, ${c}`);
      }
    }
  });

  it('triples a value unreduced, below 6q, and multiplies such a triple by a value below 2q', () => {
    const values = lazyValues(2000);
    const right = quads(values, 5);
    for (const [n, as] of quads(values, 0).entries()) {
      putLanes(VA, as);
      field.x4_triple_lazy(VR, VA);
      const triples = as.map((a, lane) => {
        assert.equal(valueOf(laneLimbs(VR, lane), 'triple_lazy', 6n * q), 3n * a, `triple_lazy ${a}`);
        return 3n * a;
      });
      checkAgainstScalar('mul', triples, right[n]!, field.x4_mul, field.mul, (a, b) => a * b * R_INV);
    }
    const edges = [6n * q - 1n, 6n * q - 3n, 3n * (2n * q - 2n)];
    checkAgainstScalar('mul', [...edges, 0n], [2n * q - 1n, q, 2n * q - 1n, 1n], field.x4_mul, field.mul, (a, b) => {
      return a * b * R_INV;
    });
  });

  it('multiplies and squares unreduced inputs, anywhere below 4q, into the lazy range', () => {
    const values = [4n * q - 1n, 3n * q, 2n * q, (1n << 255n) - 1n, ...lazyValues(2000).map((v) => v * 2n)];
    const left = quads(values, 0);
    const right = quads(values, 5);
    for (const [n, as] of left.entries()) {
      checkAgainstScalar('mul', as, right[n]!, field.x4_mul, field.mul, (a, b) => a * b * R_INV);
      checkAgainstScalar(
        'sqr',
        as,
        as,
        (r, a) => field.x4_sqr(r, a),
        field.mul,
        (a) => a * a * R_INV,
      );
    }
  });

  it("converts four points' coordinates from the key layout and back exactly, fully reduced", () => {
    const keyValues = [0n, 1n, q - 1n, ...Array.from({ length: 1000 }, () => random(q))];
    for (const keys of quads(keyValues, 3)) {
      keys.forEach((value, lane) => {
        for (let w = 0; w < 8; w++) words()[KEYS / 4 + 8 * lane + w] = Number((value >> BigInt(32 * w)) & 0xffffffffn);
      });
      field.x4_from_keys(VR, KEYS);
      for (let lane = 0; lane < LANES; lane++) {
        const working = valueOf(laneLimbs(VR, lane), 'from_keys', 2n * q);
        // The key holds a·2^256; the working form is a·2^261.
        assert.equal(mod(working), mod(keys[lane]! << 5n), `from_keys ${keys[lane]}`);
      }
      words().fill(0, KEYS / 4, KEYS / 4 + 32);
      field.x4_to_keys(KEYS, VR);
      keys.forEach((value, lane) => {
        let back = 0n;
        for (let w = 7; w >= 0; w--) back = (back << 32n) | BigInt(words()[KEYS / 4 + 8 * lane + w]!);
        assert.equal(back, value, `round trip of ${value}`);
      });
    }
    // From anywhere in the lazy range, the exit is the fully reduced key form.
    for (const values of quads(lazyValues(1000), 1)) {
      putLanes(VA, values);
      field.x4_to_keys(KEYS, VA);
      values.forEach((value, lane) => {
        let key = 0n;
        for (let w = 7; w >= 0; w--) key = (key << 32n) | BigInt(words()[KEYS / 4 + 8 * lane + w]!);
        assert.equal(key, mod(value * R_INV * KEY_R), `to_keys ${value}`);
      });
    }
  });
});
