/*
 * BN254 base field Fq in a reduced radix, for the kernel's hot loops: 9 limbs of 29 bits (u32 each,
 * little-endian), Montgomery form with R = 2^261, and lazily reduced: a value is any representative
 * in [0, 2q), limbs below 2^29.
 *
 * Why: WebAssembly has no carry flag and no 64x64->128 product, so bn254-fq.h's full 32-bit radix
 * pays a split and a carry for every 32x32 product. With 29-bit limbs a product is below 2^58, and
 * one u64 column holds all the products a Montgomery multiplication adds to it (at most 18, and
 * 18 * 2^58 < 2^63), so carries are resolved once per column. The lazy range costs nothing: as
 * 16q < R, a product of two values below 4q is below 2q (ab/R + q < 16q^2/R + q < 2q), so the
 * product has no final subtraction; additions and subtractions reduce once, by 2q, except those
 * whose result only goes into a product (rr_add_lazy, rr_sub_lazy), which need not reduce at all.
 *
 * Values come from and go back to the key's layout (bn254-fq.h: 8 limbs of 32 bits, R = 2^256,
 * fully reduced) with rr_from_key and rr_to_key, one product each.
 */
#ifndef BN254_FQ_RR_H
#define BN254_FQ_RR_H
#include "bn254-fq.h"

#define RL 9                    /* limbs */
#define RBITS 29
#define RMASK 0x1fffffffu
#define RB (RL * 4)             /* bytes per field element */
#define RPB (2 * RB)            /* bytes per affine point */

static const u32 RQ[RL] = {
    0x187cfd47u, 0x010460b6u, 0x1c72a34fu, 0x02d522d0u, 0x1585d978u,
    0x02db40c0u, 0x00a6e141u, 0x0e5c2634u, 0x0030644eu};
static const u32 RQ2[RL] = {    /* 2q */
    0x10f9fa8eu, 0x0208c16du, 0x18e5469eu, 0x05aa45a1u, 0x0b0bb2f0u,
    0x05b68181u, 0x014dc282u, 0x1cb84c68u, 0x0060c89cu};
static const u32 RMU = 0x04866389u; /* -q^-1 mod 2^29 */
/* 2^266 mod q: the product by it takes a·2^256 (the key's form) to a·2^261 (this one). */
static const u32 R_FROM_KEY[RL] = {
    0x13349ca1u, 0x1a5d84a8u, 0x0a3e5cacu, 0x100249e0u, 0x12b951e8u,
    0x0e92d304u, 0x14cb95b3u, 0x041b9d3du, 0x00058003u};
/* 2^256 mod q: the product by it takes a·2^261 back to a·2^256. */
static const u32 R_TO_KEY[RL] = {
    0x058f0d9du, 0x1aea1c6eu, 0x11c2cf74u, 0x11d651ebu, 0x1462c0a7u,
    0x11b7bc3cu, 0x1cbd99bau, 0x183340fbu, 0x000e0a77u};

static inline void rr_copy(u32 *r, const u32 *a) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = a[i];
}

/* p[0..4] = the five columns of the product of two 3-limb numbers. */
static inline void rr_mul3(u64 *p, const u64 *x, const u64 *y) {
  p[0] = x[0] * y[0];
  p[1] = x[0] * y[1] + x[1] * y[0];
  p[2] = x[0] * y[2] + x[1] * y[1] + x[2] * y[0];
  p[3] = x[1] * y[2] + x[2] * y[1];
  p[4] = x[2] * y[2];
}

/*
 * r = a·b·2^-261 mod q, in [0, 2q) for a, b in [0, 4q). Once the carries are gone, what a product
 * costs in WebAssembly is its 64-bit multiplications, so a·b is done by Karatsuba over three blocks
 * of three limbs (54 of them instead of 81; measured 1.4x the CIOS of bn254-fq.h, where the plain
 * 81 gave 1.2x): each column of a block's cross term is the difference of sums of products, exact
 * in u64 (block sums are below 2^30, so a column is below 3 * 2^60). Then Montgomery reduction
 * row by row: m_i makes column i a multiple of 2^29, whose top bits go into column i + 1; the
 * upper nine columns are the result, normalised into limbs once at the end.
 */
#ifdef RR_MUL_INLINE
__attribute__((always_inline)) static inline
#else
static
#endif
void rr_mul(u32 *r, const u32 *a, const u32 *b) {
  u64 x[RL], y[RL], sx[RL], sy[RL], p00[5], p11[5], p22[5], p01[5], p02[5], p12[5];
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    x[i] = a[i];
    y[i] = b[i];
  }
  _Pragma("clang loop unroll(full)") for (int i = 0; i < 3; i++) {
    sx[i] = x[i] + x[3 + i];
    sy[i] = y[i] + y[3 + i];
    sx[3 + i] = x[i] + x[6 + i];
    sy[3 + i] = y[i] + y[6 + i];
    sx[6 + i] = x[3 + i] + x[6 + i];
    sy[6 + i] = y[3 + i] + y[6 + i];
  }
  rr_mul3(p00, x, y);
  rr_mul3(p11, x + 3, y + 3);
  rr_mul3(p22, x + 6, y + 6);
  rr_mul3(p01, sx, sy);
  rr_mul3(p02, sx + 3, sy + 3);
  rr_mul3(p12, sx + 6, sy + 6);
  u64 t[2 * RL] = {0};
  _Pragma("clang loop unroll(full)") for (int k = 0; k < 5; k++) {
    t[k] += p00[k];
    t[3 + k] += p01[k] - p00[k] - p11[k];
    t[6 + k] += p11[k] + p02[k] - p00[k] - p22[k];
    t[9 + k] += p12[k] - p11[k] - p22[k];
    t[12 + k] += p22[k];
  }
  /* Each column now holds at most 9 products and gets 9 more below: 18 * 2^58 < 2^63. */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    const u64 m = ((u32)t[i] * RMU) & RMASK;
    _Pragma("clang loop unroll(full)") for (int j = 0; j < RL; j++) t[i + j] += m * RQ[j];
    t[i + 1] += t[i] >> RBITS;
  }
  u64 c = 0;
  _Pragma("clang loop unroll(full)") for (int j = 0; j < RL; j++) {
    c += t[RL + j];
    r[j] = (u32)c & RMASK;
    c >>= RBITS;
  }
}

/* 2^261 mod q: the element 1 in this form. */
static const u32 RR_ONE[RL] = {
    0x157ccc21u, 0x141c2758u, 0x185230d3u, 0x014c0419u, 0x0aa36fb9u,
    0x1d4240ceu, 0x11d54c07u, 0x052ac7a8u, 0x000dc836u};

/*
 * r = the representative of a in [0, q), for a in [0, 2q). A value has two representatives in the
 * lazy range, so equality and zero tests (rr_eq, rr_is_zero) are made on this one.
 */
static inline void rr_canon(u32 *r, const u32 *a) {
  u32 t[RL];
  int32_t c = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    c += (int32_t)a[i] - (int32_t)RQ[i];
    t[i] = (u32)c & RMASK;
    c >>= RBITS;
  }
  const u32 keep = (u32)c; /* all ones when a < q */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = (a[i] & keep) | (t[i] & ~keep);
}

/* a = 0 mod q, for a in [0, 2q): a is 0 or q. */
static inline int rr_is_zero(const u32 *a) {
  u32 zero = 0, is_q = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    zero |= a[i];
    is_q |= a[i] ^ RQ[i];
  }
  return zero == 0 || is_q == 0;
}

/* a = b mod q, for a, b in [0, 2q). */
static inline int rr_eq(const u32 *a, const u32 *b) {
  u32 ca[RL], cb[RL], diff = 0;
  rr_canon(ca, a);
  rr_canon(cb, b);
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) diff |= ca[i] ^ cb[i];
  return diff == 0;
}

/*
 * r = a - b mod q for a, b in [0, 2q): a - b, plus 2q when negative, is in [0, 2q). Both candidates
 * are computed side by side in one pass and the sign of the first picks one.
 */
static inline void rr_sub(u32 *r, const u32 *a, const u32 *b) {
  u32 t[RL], u[RL];
  int32_t c = 0, k = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    const int32_t d = (int32_t)a[i] - (int32_t)b[i];
    c += d;
    t[i] = (u32)c & RMASK;
    c >>= RBITS; /* arithmetic: the borrow is -1 or 0 */
    k += d + (int32_t)RQ2[i];
    u[i] = (u32)k & RMASK;
    k >>= RBITS;
  }
  const u32 wrap = (u32)c; /* all ones when a < b */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = (t[i] & ~wrap) | (u[i] & wrap);
}

/* r = a + b mod q for a, b in [0, 2q): the sum is below 4q, so one conditional 2q brings it below 2q. */
static inline void rr_add(u32 *r, const u32 *a, const u32 *b) {
  u32 s[RL], t[RL];
  u32 k = 0;
  int32_t c = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    k += a[i] + b[i];
    s[i] = k & RMASK;
    k >>= RBITS;
    c += (int32_t)s[i] - (int32_t)RQ2[i];
    t[i] = (u32)c & RMASK;
    c >>= RBITS;
  }
  const u32 keep = (u32)c; /* all ones when the sum is below 2q */
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) r[i] = (s[i] & keep) | (t[i] & ~keep);
}

/* r = a + b, in [0, 4q) for a, b in [0, 2q): unreduced, so only for a product's input. */
static inline void rr_add_lazy(u32 *r, const u32 *a, const u32 *b) {
  u32 k = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    k += a[i] + b[i];
    r[i] = k & RMASK;
    k >>= RBITS;
  }
}

/* r = a - b + 2q, in (0, 4q) for a, b in [0, 2q): unreduced, so only for a product's input. */
static inline void rr_sub_lazy(u32 *r, const u32 *a, const u32 *b) {
  int32_t c = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    c += (int32_t)a[i] - (int32_t)b[i] + (int32_t)RQ2[i];
    r[i] = (u32)c & RMASK;
    c >>= RBITS;
  }
}

static inline void rr_neg(u32 *r, const u32 *a) {
  static const u32 zero[RL] = {0};
  rr_sub(r, zero, a);
}

/* Key layout (8 x 32 bits, a·2^256, below q) to this one (a·2^261, in [0, 2q)). */
static inline void rr_from_key(u32 *r, const u32 *key) {
  u32 v[RL];
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) {
    const int bit = i * RBITS, word = bit >> 5, shift = bit & 31;
    u64 w = key[word] >> shift;
    if (shift > 32 - RBITS && word + 1 < NL) w |= (u64)key[word + 1] << (32 - shift);
    v[i] = (u32)w & RMASK;
  }
  rr_mul(r, v, R_FROM_KEY);
}

/* This layout back to the key's: a·2^256, fully reduced, 8 little-endian 32-bit limbs. */
static inline void rr_to_key(u32 *key, const u32 *a) {
  u32 v[RL], t[RL];
  rr_mul(v, a, R_TO_KEY);
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

/* r = 1/a by Fermat, a^(q-2), square-and-multiply from the top bit; one is 1 in this form. */
static inline void rr_inv(u32 *r, const u32 *a, const u32 *one) {
  u32 acc[RL];
  rr_copy(acc, one);
  for (int limb = NL - 1; limb >= 0; limb--) {
    for (int bit = 31; bit >= 0; bit--) {
      rr_mul(acc, acc, acc);
      if ((QM2[limb] >> bit) & 1) rr_mul(acc, acc, a);
    }
  }
  rr_copy(r, acc);
}

#endif
