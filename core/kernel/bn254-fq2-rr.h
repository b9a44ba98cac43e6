/*
 * BN254's quadratic extension Fq² = Fq[u]/(u² + 1) over bn254-fq-rr.h's reduced radix: c0 then c1,
 * each 9 limbs of 29 bits, lazily reduced in [0, 2q), so one element is 18 limbs, 72 bytes. The
 * formulas are bn254-fq2.h's; the sums that only feed a product are left unreduced (below 4q, what
 * rr_mul takes), and equality and zero are decided on residues (rr_eq, rr_is_zero). Elements come
 * from and go back to the key's layout (bn254-fq2.h: 16 limbs of 32 bits) with f2rr_from_key and
 * f2rr_to_key. Every function allows its result to alias its inputs.
 */
#ifndef BN254_FQ2_RR_H
#define BN254_FQ2_RR_H
#include "bn254-fq-rr.h"

#define RL2 (2 * RL)

static const u32 F2RR_ONE[RL2] = {
    0x157ccc21u, 0x141c2758u, 0x185230d3u, 0x014c0419u, 0x0aa36fb9u,
    0x1d4240ceu, 0x11d54c07u, 0x052ac7a8u, 0x000dc836u};

static inline void f2rr_copy(u32 *r, const u32 *a) {
  rr_copy(r, a);
  rr_copy(r + RL, a + RL);
}

static inline int f2rr_is_zero(const u32 *a) { return rr_is_zero(a) && rr_is_zero(a + RL); }

static inline int f2rr_eq(const u32 *a, const u32 *b) { return rr_eq(a, b) && rr_eq(a + RL, b + RL); }

/* Not inlined, as bn254-fq2.h's: unrolled twice at every call site they would swell the module. */
__attribute__((noinline)) static void f2rr_add(u32 *r, const u32 *a, const u32 *b) {
  rr_add(r, a, b);
  rr_add(r + RL, a + RL, b + RL);
}

__attribute__((noinline)) static void f2rr_sub(u32 *r, const u32 *a, const u32 *b) {
  rr_sub(r, a, b);
  rr_sub(r + RL, a + RL, b + RL);
}

static inline void f2rr_neg(u32 *r, const u32 *a) {
  rr_neg(r, a);
  rr_neg(r + RL, a + RL);
}

/* Karatsuba: three Fq products, (a0 + a1 u)(b0 + b1 u) = a0b0 − a1b1 + ((a0 + a1)(b0 + b1) − a0b0 − a1b1) u. */
static void f2rr_mul(u32 *r, const u32 *a, const u32 *b) {
  u32 v0[RL], v1[RL], s[RL], t[RL];
  rr_mul(v0, a, b);
  rr_mul(v1, a + RL, b + RL);
  rr_add_lazy(s, a, a + RL);
  rr_add_lazy(t, b, b + RL);
  rr_mul(s, s, t);
  rr_sub(r, v0, v1);
  rr_sub(s, s, v0);
  rr_sub(r + RL, s, v1);
}

/* Two Fq products: (a0 + a1 u)² = (a0 + a1)(a0 − a1) + 2 a0 a1 u. */
static void f2rr_sqr(u32 *r, const u32 *a) {
  u32 s[RL], d[RL], p[RL];
  rr_add_lazy(s, a, a + RL);
  rr_sub_lazy(d, a, a + RL);
  rr_mul(p, a, a + RL);
  rr_mul(r, s, d);
  rr_add(r + RL, p, p);
}

/* Through the norm, one Fq inversion: 1/(a0 + a1 u) = (a0 − a1 u)/(a0² + a1²). Zero gives zero. */
static void f2rr_inv(u32 *r, const u32 *a) {
  u32 n[RL], t[RL];
  rr_mul(n, a, a);
  rr_mul(t, a + RL, a + RL);
  rr_add(n, n, t);
  rr_inv(n, n, RR_ONE);
  rr_mul(t, a + RL, n);
  rr_mul(r, a, n);
  rr_neg(r + RL, t);
}

/* The key's layout (c0, c1: 8 x 32 bits each) to this one, and back, exact and fully reduced. */
static inline void f2rr_from_key(u32 *r, const u32 *key) {
  rr_from_key(r, key);
  rr_from_key(r + RL, key + NL);
}

static inline void f2rr_to_key(u32 *key, const u32 *a) {
  rr_to_key(key, a);
  rr_to_key(key + NL, a + RL);
}

#endif
