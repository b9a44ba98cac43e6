/*
 * bn254-fq-rr.h's field four values at a time, in WebAssembly SIMD128 (built with -msimd128): an
 * element here (an X4, 9 vectors) holds limb i of four independent values in the four 32-bit lanes
 * of its vector i, each value in bn254-fq-rr.h's form (9 limbs of 29 bits, Montgomery with
 * R = 2^261, lazily reduced in [0, 2q)). Every operation gives, lane by lane, exactly the limbs
 * bn254-fq-rr.h's gives for the same inputs (tests/kernel/reduced-radix-x4.test.ts).
 *
 * Why four lanes: WebAssembly's only exact 32x32->64-bit product in SIMD is i64x2.extmul_{low,high}
 * _i32x4_u, two products in one instruction (V8 lowers it to two unpacks and one pmuludq), where
 * scalar code pays one i64.mul a product. The four values' columns are kept as two i64x2 halves
 * (lanes 0-1, lanes 2-3), each column with the same bound as the scalar product's.
 *
 * The reduction's constants (q's limbs) are loaded from a table clang cannot see into (rr4_init
 * fills it): given a constant, clang folds the extension of its splat and emits i64x2.mul, which V8
 * lowers to three pmuludq and four shifts, where extmul is one.
 */
#ifndef BN254_FQ_RR_X4_H
#define BN254_FQ_RR_X4_H
#include <wasm_simd128.h>
#include "bn254-fq-rr.h"

typedef v128_t V;

/*
 * Constants splat across the four lanes, filled by rr4_init (above: why not constants): q's limbs,
 * 1, and the factors of the conversions from and to the key's form (R_FROM_KEY, R_TO_KEY). rr4_init
 * is not inlined, so that clang cannot forward its stores into the products.
 */
static V RQ_SPLAT[RL], ONE_SPLAT[RL], FROM_KEY_SPLAT[RL], TO_KEY_SPLAT[RL], LOOSE_4Q_SPLAT[RL];

/*
 * 4q in limbs that each cover the largest limb subtracted from them (rr4_sub_loose): 2^29 borrowed
 * from every limb above the lowest, 2^29 - 1 of it left in the limb below. The same number as
 * 4q's limbs, 0x1f3f51c, 0x41182db, ... (rr4_sub2), each limb but the lowest and the highest
 * 2^29 - 1 larger.
 */
static const u32 LOOSE_4Q[RL] = {
    0x21f3f51cu, 0x241182dau, 0x31ca8d3bu, 0x2b548b42u, 0x361765dfu,
    0x2b6d0301u, 0x229b8503u, 0x397098cfu, 0x00c19138u};

__attribute__((noinline)) static void rr4_init(void) {
  _Pragma("clang loop unroll(full)") for (int j = 0; j < RL; j++) {
    RQ_SPLAT[j] = wasm_i32x4_splat((int32_t)RQ[j]);
    ONE_SPLAT[j] = wasm_i32x4_splat((int32_t)RR_ONE[j]);
    FROM_KEY_SPLAT[j] = wasm_i32x4_splat((int32_t)R_FROM_KEY[j]);
    TO_KEY_SPLAT[j] = wasm_i32x4_splat((int32_t)R_TO_KEY[j]);
    LOOSE_4Q_SPLAT[j] = wasm_i32x4_splat((int32_t)LOOSE_4Q[j]);
  }
}

#define X4_LO(a, b) wasm_u64x2_extmul_low_u32x4(a, b)
#define X4_HI(a, b) wasm_u64x2_extmul_high_u32x4(a, b)
#define X4_ADD64(a, b) wasm_i64x2_add(a, b)
#define X4_SUB64(a, b) wasm_i64x2_sub(a, b)

static inline void rr4_copy(V *r, const V *a) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = a[i];
}

static inline void rr4_splat(V *r, const u32 *a) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = wasm_i32x4_splat((int32_t)a[i]);
}

/* Lane `lane` of a, as a bn254-fq-rr.h element, and back. */
static inline void rr4_get_lane(u32 *r, const V *a, int lane) {
  const u32 *words = (const u32 *)a;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = words[4 * i + lane];
}

static inline void rr4_set_lane(V *r, const u32 *a, int lane) {
  u32 *words = (u32 *)r;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) words[4 * i + lane] = a[i];
}

/*
 * The key's 8 limbs of 32 bits regrouped into 9 of 29 (the same number, a·2^256, not yet multiplied
 * by R_FROM_KEY), and back (v, a·2^256 in [0, 2q), fully reduced and repacked): rr_from_key's and
 * rr_to_key's steps around their products, which the walk makes four lanes at a time. Kept apart
 * from bn254-fq-rr.h, whose compiled bytes a split there changes.
 */
static inline void rr_unpack_key(u32 *v, const u32 *key) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    const int bit = i * RBITS, word = bit >> 5, shift = bit & 31;
    u64 w = key[word] >> shift;
    if (shift > 32 - RBITS && word + 1 < NL) w |= (u64)key[word + 1] << (32 - shift);
    v[i] = (u32)w & RMASK;
  }
}

static inline void rr_pack_key(u32 *key, const u32 *a) {
  u32 v[RL], t[RL];
  rr_copy(v, a);
  int32_t c = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    c += (int32_t)v[i] - (int32_t)RQ[i];
    t[i] = (u32)c & RMASK;
    c >>= RBITS;
  }
  if (c == 0) rr_copy(v, t); /* v >= q */
  _Pragma("clang loop unroll(full)") for (int w = 0; w < NL; w++) {
    const int bit = w * 32, i = bit / RBITS, shift = bit % RBITS;
    u64 x = (u64)v[i] >> shift;
    x |= (u64)v[i + 1] << (RBITS - shift);
    if (shift + 32 > 2 * RBITS && i + 2 < RL) x |= (u64)v[i + 2] << (2 * RBITS - shift);
    key[w] = (u32)x;
  }
}

/* The five columns of two 3-limb numbers' product, lanes 0-1 in pl and lanes 2-3 in ph. */
__attribute__((always_inline)) static inline void rr4_mul3(V *pl, V *ph, const V *x, const V *y) {
  pl[0] = X4_LO(x[0], y[0]);
  ph[0] = X4_HI(x[0], y[0]);
  pl[1] = X4_ADD64(X4_LO(x[0], y[1]), X4_LO(x[1], y[0]));
  ph[1] = X4_ADD64(X4_HI(x[0], y[1]), X4_HI(x[1], y[0]));
  pl[2] = X4_ADD64(X4_ADD64(X4_LO(x[0], y[2]), X4_LO(x[1], y[1])), X4_LO(x[2], y[0]));
  ph[2] = X4_ADD64(X4_ADD64(X4_HI(x[0], y[2]), X4_HI(x[1], y[1])), X4_HI(x[2], y[0]));
  pl[3] = X4_ADD64(X4_LO(x[1], y[2]), X4_LO(x[2], y[1]));
  ph[3] = X4_ADD64(X4_HI(x[1], y[2]), X4_HI(x[2], y[1]));
  pl[4] = X4_LO(x[2], y[2]);
  ph[4] = X4_HI(x[2], y[2]);
}

/* The five columns of a 3-limb number's square: x0², 2x0x1, 2x0x2 + x1², 2x1x2, x2² (6 products, not 9). */
__attribute__((always_inline)) static inline void rr4_sqr3(V *pl, V *ph, const V *x) {
  const V d0 = wasm_i32x4_add(x[0], x[0]), d1 = wasm_i32x4_add(x[1], x[1]);
  pl[0] = X4_LO(x[0], x[0]);
  ph[0] = X4_HI(x[0], x[0]);
  pl[1] = X4_LO(d0, x[1]);
  ph[1] = X4_HI(d0, x[1]);
  pl[2] = X4_ADD64(X4_LO(d0, x[2]), X4_LO(x[1], x[1]));
  ph[2] = X4_ADD64(X4_HI(d0, x[2]), X4_HI(x[1], x[1]));
  pl[3] = X4_LO(d1, x[2]);
  ph[3] = X4_HI(d1, x[2]);
  pl[4] = X4_LO(x[2], x[2]);
  ph[4] = X4_HI(x[2], x[2]);
}

/*
 * r = the Montgomery reduction of a Karatsuba product over three blocks of three limbs, given the
 * six block products (pXY: block X times block Y's, or for 01, 02, 12 the sums' product), lanes 0-1
 * in l and 2-3 in h: bn254-fq-rr.h's rr_mul after its block products, every column held for two
 * lanes in an i64x2.
 */
__attribute__((always_inline)) static inline void rr4_reduce(V *r, const V *l00, const V *l11, const V *l22,
                                                             const V *l01, const V *l02, const V *l12, const V *h00,
                                                             const V *h11, const V *h22, const V *h01, const V *h02,
                                                             const V *h12) {
  V tl[2 * RL], th[2 * RL];
  _Pragma("clang loop unroll(full)") for (int i = 0; i < 2 * RL; i++) tl[i] = th[i] = wasm_i64x2_const(0, 0);
  _Pragma("clang loop unroll(full)") for (int k = 0; k < 5; k++) {
    tl[k] = X4_ADD64(tl[k], l00[k]);
    th[k] = X4_ADD64(th[k], h00[k]);
    tl[3 + k] = X4_ADD64(tl[3 + k], X4_SUB64(X4_SUB64(l01[k], l00[k]), l11[k]));
    th[3 + k] = X4_ADD64(th[3 + k], X4_SUB64(X4_SUB64(h01[k], h00[k]), h11[k]));
    tl[6 + k] = X4_ADD64(tl[6 + k], X4_SUB64(X4_SUB64(X4_ADD64(l11[k], l02[k]), l00[k]), l22[k]));
    th[6 + k] = X4_ADD64(th[6 + k], X4_SUB64(X4_SUB64(X4_ADD64(h11[k], h02[k]), h00[k]), h22[k]));
    tl[9 + k] = X4_ADD64(tl[9 + k], X4_SUB64(X4_SUB64(l12[k], l11[k]), l22[k]));
    th[9 + k] = X4_ADD64(th[9 + k], X4_SUB64(X4_SUB64(h12[k], h11[k]), h22[k]));
    tl[12 + k] = X4_ADD64(tl[12 + k], l22[k]);
    th[12 + k] = X4_ADD64(th[12 + k], h22[k]);
  }
  const V mu = wasm_i32x4_splat((int32_t)RMU), mask = wasm_i32x4_splat((int32_t)RMASK);
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    /* m = (t_i mod 2^32)·(-1/q) mod 2^29, for the four lanes at once. */
    const V m = wasm_v128_and(wasm_i32x4_mul(wasm_i32x4_shuffle(tl[i], th[i], 0, 2, 4, 6), mu), mask);
    _Pragma("clang loop unroll(full)") for (int j = 0; j < RL; j++) {
      const V qj = wasm_v128_load(&RQ_SPLAT[j]);
      tl[i + j] = X4_ADD64(tl[i + j], X4_LO(m, qj));
      th[i + j] = X4_ADD64(th[i + j], X4_HI(m, qj));
    }
    tl[i + 1] = X4_ADD64(tl[i + 1], wasm_u64x2_shr(tl[i], RBITS));
    th[i + 1] = X4_ADD64(th[i + 1], wasm_u64x2_shr(th[i], RBITS));
  }
  V cl = wasm_i64x2_const(0, 0), ch = cl;
  _Pragma("clang loop unroll(full)") for (int j = 0; j < RL; j++) {
    cl = X4_ADD64(cl, tl[RL + j]);
    ch = X4_ADD64(ch, th[RL + j]);
    /* The four lanes' low words gathered first, then masked: one and, not two. */
    r[j] = wasm_v128_and(wasm_i32x4_shuffle(cl, ch, 0, 2, 4, 6), mask);
    cl = wasm_u64x2_shr(cl, RBITS);
    ch = wasm_u64x2_shr(ch, RBITS);
  }
}

/* The three blocks' pairwise sums of a, for Karatsuba's cross terms (below 2^30: they fit the lanes). */
__attribute__((always_inline)) static inline void rr4_block_sums(V *s, const V *a) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < 3; i++) {
    s[i] = wasm_i32x4_add(a[i], a[3 + i]);
    s[3 + i] = wasm_i32x4_add(a[i], a[6 + i]);
    s[6 + i] = wasm_i32x4_add(a[3 + i], a[6 + i]);
  }
}

/*
 * r = a·b·2^-261 mod q lane by lane, in [0, 2q) for a, b in [0, 4q): bn254-fq-rr.h's rr_mul
 * (Karatsuba over three blocks of three limbs, then Montgomery reduction row by row). Not inlined:
 * the product is ~1,900 machine instructions in V8, and a walk that inlines it at each call outgrows
 * the CPU's decoded-instruction cache (docs/kernel.md: inlined, the walk was slower than scalar).
 */
__attribute__((noinline)) static void rr4_mul(V *r, const V *a, const V *b) {
  V sx[RL], sy[RL];
  V l00[5], l11[5], l22[5], l01[5], l02[5], l12[5];
  V h00[5], h11[5], h22[5], h01[5], h02[5], h12[5];
  rr4_block_sums(sx, a);
  rr4_block_sums(sy, b);
  rr4_mul3(l00, h00, a, b);
  rr4_mul3(l11, h11, a + 3, b + 3);
  rr4_mul3(l22, h22, a + 6, b + 6);
  rr4_mul3(l01, h01, sx, sy);
  rr4_mul3(l02, h02, sx + 3, sy + 3);
  rr4_mul3(l12, h12, sx + 6, sy + 6);
  rr4_reduce(r, l00, l11, l22, l01, l02, l12, h00, h11, h22, h01, h02, h12);
}

/* r = a² lane by lane: rr4_mul(r, a, a) with 36 block products instead of 54 (the same limbs out). */
__attribute__((noinline)) static void rr4_sqr(V *r, const V *a) {
  V sx[RL];
  V l00[5], l11[5], l22[5], l01[5], l02[5], l12[5];
  V h00[5], h11[5], h22[5], h01[5], h02[5], h12[5];
  rr4_block_sums(sx, a);
  rr4_sqr3(l00, h00, a);
  rr4_sqr3(l11, h11, a + 3);
  rr4_sqr3(l22, h22, a + 6);
  rr4_sqr3(l01, h01, sx);
  rr4_sqr3(l02, h02, sx + 3);
  rr4_sqr3(l12, h12, sx + 6);
  rr4_reduce(r, l00, l11, l22, l01, l02, l12, h00, h11, h22, h01, h02, h12);
}

/* r = a - b mod q lane by lane, for a, b in [0, 2q): rr_sub's two candidates, picked by the borrow. */
static inline void rr4_sub(V *r, const V *a, const V *b) {
  const V mask = wasm_i32x4_splat((int32_t)RMASK);
  V t[RL], u[RL], c = wasm_i32x4_splat(0), k = c;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    const V d = wasm_i32x4_sub(a[i], b[i]);
    c = wasm_i32x4_add(c, d);
    t[i] = wasm_v128_and(c, mask);
    c = wasm_i32x4_shr(c, RBITS);
    k = wasm_i32x4_add(k, wasm_i32x4_add(d, wasm_i32x4_splat((int32_t)RQ2[i])));
    u[i] = wasm_v128_and(k, mask);
    k = wasm_i32x4_shr(k, RBITS);
  }
  /* c is all ones in the lanes where a < b. */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = wasm_v128_bitselect(u[i], t[i], c);
}

/* r = a + b mod q lane by lane, for a, b in [0, 2q). */
static inline void rr4_add(V *r, const V *a, const V *b) {
  const V mask = wasm_i32x4_splat((int32_t)RMASK);
  V s[RL], t[RL], k = wasm_i32x4_splat(0), c = k;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    k = wasm_i32x4_add(k, wasm_i32x4_add(a[i], b[i]));
    s[i] = wasm_v128_and(k, mask);
    k = wasm_u32x4_shr(k, RBITS);
    c = wasm_i32x4_add(c, wasm_i32x4_sub(s[i], wasm_i32x4_splat((int32_t)RQ2[i])));
    t[i] = wasm_v128_and(c, mask);
    c = wasm_i32x4_shr(c, RBITS);
  }
  /* c is all ones in the lanes where the sum is below 2q. */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = wasm_v128_bitselect(s[i], t[i], c);
}

/* r = a + b, in [0, 4q) for a, b in [0, 2q): unreduced, so only for a product's input. */
static inline void rr4_add_lazy(V *r, const V *a, const V *b) {
  const V mask = wasm_i32x4_splat((int32_t)RMASK);
  V k = wasm_i32x4_splat(0);
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    k = wasm_i32x4_add(k, wasm_i32x4_add(a[i], b[i]));
    r[i] = wasm_v128_and(k, mask);
    k = wasm_u32x4_shr(k, RBITS);
  }
}

/* r = a - b + 2q, in (0, 4q) for a, b in [0, 2q): unreduced, so only for a product's input. */
static inline void rr4_sub_lazy(V *r, const V *a, const V *b) {
  const V mask = wasm_i32x4_splat((int32_t)RMASK);
  V c = wasm_i32x4_splat(0);
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    c = wasm_i32x4_add(c, wasm_i32x4_add(wasm_i32x4_sub(a[i], b[i]), wasm_i32x4_splat((int32_t)RQ2[i])));
    r[i] = wasm_v128_and(c, mask);
    c = wasm_i32x4_shr(c, RBITS);
  }
}

/*
 * The loose forms below skip the carries: their limbs are not below 2^29 but below 3·2^29, which a
 * product takes in ONE of its inputs (the other's limbs below 2^29): a column of a block-sum
 * product is then below 3·(6·2^29)(2·2^29) = 2^63.2, a column of the whole product with its
 * reduction below 27·2^58 + 9·2^58 + 2^35 < 2^64, and its result is that of the same number in
 * normalised limbs (the reduction sees the number, not its limbs). Only for a product's input
 * whose other input is a product's result or the lanes' inverse; never for a squaring.
 */

/* r = a + b, in [0, 4q) for a, b in [0, 2q), limbs below 2^30: rr4_add_lazy without its carries. */
static inline void rr4_add_loose(V *r, const V *a, const V *b) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = wasm_i32x4_add(a[i], b[i]);
}

/*
 * r = a - b + 4q, in (2q, 6q) for a, b in [0, 2q), limbs below 3·2^29: each limb of b taken from
 * LOOSE_4Q's, which covers it (4q, not 2q: 2q's top limb may be b's).
 */
static inline void rr4_sub_loose(V *r, const V *a, const V *b) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++)
    r[i] = wasm_i32x4_sub(wasm_i32x4_add(a[i], wasm_v128_load(&LOOSE_4Q_SPLAT[i])), b[i]);
}

/* r = 3a, in [0, 6q) for a in [0, 2q), limbs below 3·2^29: rr4_triple_lazy without its carries. */
static inline void rr4_triple_loose(V *r, const V *a) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++)
    r[i] = wasm_i32x4_add(wasm_i32x4_add(a[i], a[i]), a[i]);
}

/* 4q, rr4_sub2's largest correction. */
static const u32 RQ4[RL] = {
    0x01f3f51cu, 0x041182dbu, 0x11ca8d3cu, 0x0b548b43u, 0x161765e0u,
    0x0b6d0302u, 0x029b8504u, 0x197098d0u, 0x00c19139u};

/*
 * r = a - b - c mod q lane by lane, for a, b, c in [0, 2q), in [0, 2q): the same limbs as two rr4_sub
 * (both give the one value there congruent to a - b - c modulo 2q), in one pass of three independent
 * carry chains (a - b - c plus 0, 2q and 4q) where the two made four, one after the other.
 */
static inline void rr4_sub2(V *r, const V *a, const V *b, const V *c) {
  const V mask = wasm_i32x4_splat((int32_t)RMASK);
  V w[RL], u[RL], t[RL], cw = wasm_i32x4_splat(0), cu = cw, ct = cw;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    const V d = wasm_i32x4_sub(wasm_i32x4_sub(a[i], b[i]), c[i]);
    cw = wasm_i32x4_add(cw, d);
    w[i] = wasm_v128_and(cw, mask);
    cw = wasm_i32x4_shr(cw, RBITS);
    cu = wasm_i32x4_add(cu, wasm_i32x4_add(d, wasm_i32x4_splat((int32_t)RQ2[i])));
    u[i] = wasm_v128_and(cu, mask);
    cu = wasm_i32x4_shr(cu, RBITS);
    ct = wasm_i32x4_add(ct, wasm_i32x4_add(d, wasm_i32x4_splat((int32_t)RQ4[i])));
    t[i] = wasm_v128_and(ct, mask);
    ct = wasm_i32x4_shr(ct, RBITS);
  }
  /* cw is all ones in the lanes where a - b - c < 0, cu where it is below -2q. */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++)
    r[i] = wasm_v128_bitselect(t[i], wasm_v128_bitselect(u[i], w[i], cw), cu);
}

/*
 * r = 3a, in [0, 6q) for a in [0, 2q): unreduced, so only for a product's input whose other input
 * is below 2q (a product needs a·b < q·2^261, about 170 q², for its result in [0, 2q)).
 */
static inline void rr4_triple_lazy(V *r, const V *a) {
  const V mask = wasm_i32x4_splat((int32_t)RMASK);
  V k = wasm_i32x4_splat(0);
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    k = wasm_i32x4_add(k, wasm_i32x4_add(wasm_i32x4_add(a[i], a[i]), a[i]));
    r[i] = wasm_v128_and(k, mask);
    k = wasm_u32x4_shr(k, RBITS);
  }
}

static inline void rr4_neg(V *r, const V *a) {
  V zero[RL];
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) zero[i] = wasm_i32x4_splat(0);
  rr4_sub(r, zero, a);
}

#endif
