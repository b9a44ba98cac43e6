/*
 * BN254's quadratic extension Fq² = Fq[u]/(u² + 1), the field of G2's coordinates, in the layout of
 * snarkjs's zkeys: c0 then c1 (a = c0 + c1·u), each an Fq element of bn254-fq.h, so one element is
 * 16 limbs, 64 bytes. Every function allows its result to alias its inputs, as the Fq ones do.
 */
#ifndef BN254_FQ2_H
#define BN254_FQ2_H
#include "bn254-fq.h"

#define NL2 (2 * NL)

static const u32 F2_ONE[NL2] = {
    0xc58f0d9du, 0xd35d438du, 0xf5c70b3du, 0x0a78eb28u,
    0x7879462cu, 0x666ea36fu, 0x9a07df2fu, 0x0e0a77c1u};

static inline void f2_copy(u32 *r, const u32 *a) {
  fe_copy(r, a);
  fe_copy(r + NL, a + NL);
}

static inline int f2_is_zero(const u32 *a) { return fe_is_zero(a) && fe_is_zero(a + NL); }

static inline int f2_eq(const u32 *a, const u32 *b) { return fe_eq(a, b) && fe_eq(a + NL, b + NL); }

/*
 * Not inlined: each Fq² sum is two unrolled Fq ones, and at every call site they would more than
 * double the module's size for no measurable speed (the products dominate).
 */
__attribute__((noinline)) static void f2_add(u32 *r, const u32 *a, const u32 *b) {
  fe_add(r, a, b);
  fe_add(r + NL, a + NL, b + NL);
}

__attribute__((noinline)) static void f2_sub(u32 *r, const u32 *a, const u32 *b) {
  fe_sub(r, a, b);
  fe_sub(r + NL, a + NL, b + NL);
}

static inline void f2_neg(u32 *r, const u32 *a) {
  fe_neg(r, a);
  fe_neg(r + NL, a + NL);
}

/* Karatsuba: three Fq products, (a0 + a1 u)(b0 + b1 u) = a0b0 − a1b1 + ((a0 + a1)(b0 + b1) − a0b0 − a1b1) u. */
static void f2_mul(u32 *r, const u32 *a, const u32 *b) {
  u32 v0[NL], v1[NL], s[NL], t[NL];
  fe_mul(v0, a, b);
  fe_mul(v1, a + NL, b + NL);
  fe_add(s, a, a + NL);
  fe_add(t, b, b + NL);
  fe_mul(s, s, t);
  fe_sub(r, v0, v1);
  fe_sub(s, s, v0);
  fe_sub(r + NL, s, v1);
}

/* Two Fq products: (a0 + a1 u)² = (a0 + a1)(a0 − a1) + 2 a0 a1 u. */
static void f2_sqr(u32 *r, const u32 *a) {
  u32 s[NL], d[NL], p[NL];
  fe_add(s, a, a + NL);
  fe_sub(d, a, a + NL);
  fe_mul(p, a, a + NL);
  fe_mul(r, s, d);
  fe_add(r + NL, p, p);
}

/* Through the norm, one Fq inversion: 1/(a0 + a1 u) = (a0 − a1 u)/(a0² + a1²). Zero gives zero. */
static void f2_inv(u32 *r, const u32 *a) {
  u32 n[NL], t[NL];
  fe_mul(n, a, a);
  fe_mul(t, a + NL, a + NL);
  fe_add(n, n, t);
  fe_inv(n, n);
  fe_mul(t, a + NL, n);
  fe_mul(r, a, n);
  fe_neg(r + NL, t);
}

#endif
