/*
 * BN254's quadratic extension Fq² = Fq[u]/(u² + 1) over a base field the including file names,
 * written once for bn254-fq2.h (the key's 32-bit field) and bn254-fq2-rr.h (the reduced radix):
 * c0 then c1 (a = c0 + c1·u), each a base element of FQ2_BL limbs. Every function allows its
 * result to alias its inputs, as the base field's do. No include guard: each of those headers
 * includes it once, with its own names, which this file undefines at its end.
 *
 * The including file defines FQ2_(name) (the functions' prefix), FQ2_BL, and the base field's
 * fq2_b_copy, fq2_b_is_zero, fq2_b_eq, fq2_b_add, fq2_b_sub, fq2_b_neg, fq2_b_mul, fq2_b_inv (one
 * argument in, one out), and fq2_b_add_lazy, fq2_b_sub_lazy: a sum and a difference only fit for
 * a product's input (fq2_b_add and fq2_b_sub where the base field reduces fully).
 */

static inline void FQ2_(copy)(u32 *r, const u32 *a) {
  fq2_b_copy(r, a);
  fq2_b_copy(r + FQ2_BL, a + FQ2_BL);
}

static inline int FQ2_(is_zero)(const u32 *a) { return fq2_b_is_zero(a) && fq2_b_is_zero(a + FQ2_BL); }

static inline int FQ2_(eq)(const u32 *a, const u32 *b) { return fq2_b_eq(a, b) && fq2_b_eq(a + FQ2_BL, b + FQ2_BL); }

/*
 * Not inlined: each Fq² sum is two unrolled Fq ones, and at every call site they would more than
 * double the module's size for no measurable speed (the products dominate).
 */
__attribute__((noinline)) static void FQ2_(add)(u32 *r, const u32 *a, const u32 *b) {
  fq2_b_add(r, a, b);
  fq2_b_add(r + FQ2_BL, a + FQ2_BL, b + FQ2_BL);
}

__attribute__((noinline)) static void FQ2_(sub)(u32 *r, const u32 *a, const u32 *b) {
  fq2_b_sub(r, a, b);
  fq2_b_sub(r + FQ2_BL, a + FQ2_BL, b + FQ2_BL);
}

static inline void FQ2_(neg)(u32 *r, const u32 *a) {
  fq2_b_neg(r, a);
  fq2_b_neg(r + FQ2_BL, a + FQ2_BL);
}

/* Karatsuba: three Fq products, (a0 + a1 u)(b0 + b1 u) = a0b0 − a1b1 + ((a0 + a1)(b0 + b1) − a0b0 − a1b1) u. */
static void FQ2_(mul)(u32 *r, const u32 *a, const u32 *b) {
  u32 v0[FQ2_BL], v1[FQ2_BL], s[FQ2_BL], t[FQ2_BL];
  fq2_b_mul(v0, a, b);
  fq2_b_mul(v1, a + FQ2_BL, b + FQ2_BL);
  fq2_b_add_lazy(s, a, a + FQ2_BL);
  fq2_b_add_lazy(t, b, b + FQ2_BL);
  fq2_b_mul(s, s, t);
  fq2_b_sub(r, v0, v1);
  fq2_b_sub(s, s, v0);
  fq2_b_sub(r + FQ2_BL, s, v1);
}

/* Two Fq products: (a0 + a1 u)² = (a0 + a1)(a0 − a1) + 2 a0 a1 u. */
static void FQ2_(sqr)(u32 *r, const u32 *a) {
  u32 s[FQ2_BL], d[FQ2_BL], p[FQ2_BL];
  fq2_b_add_lazy(s, a, a + FQ2_BL);
  fq2_b_sub_lazy(d, a, a + FQ2_BL);
  fq2_b_mul(p, a, a + FQ2_BL);
  fq2_b_mul(r, s, d);
  fq2_b_add(r + FQ2_BL, p, p);
}

/* Through the norm, one Fq inversion: 1/(a0 + a1 u) = (a0 − a1 u)/(a0² + a1²). Zero gives zero. */
static void FQ2_(inv)(u32 *r, const u32 *a) {
  u32 n[FQ2_BL], t[FQ2_BL];
  fq2_b_mul(n, a, a);
  fq2_b_mul(t, a + FQ2_BL, a + FQ2_BL);
  fq2_b_add(n, n, t);
  fq2_b_inv(n, n);
  fq2_b_mul(t, a + FQ2_BL, n);
  fq2_b_mul(r, a, n);
  fq2_b_neg(r + FQ2_BL, t);
}

#undef FQ2_
#undef FQ2_BL
#undef fq2_b_copy
#undef fq2_b_is_zero
#undef fq2_b_eq
#undef fq2_b_add
#undef fq2_b_sub
#undef fq2_b_neg
#undef fq2_b_mul
#undef fq2_b_inv
#undef fq2_b_add_lazy
#undef fq2_b_sub_lazy
