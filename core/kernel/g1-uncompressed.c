/*
 * g1-uncompressed: G1 points in snarkjs's "uncompressed" form, the form its circuit hash (csHash)
 * hashes: x then y, each 32 bytes big-endian in standard (not Montgomery) form; the point at
 * infinity as 64 zero bytes. For the audit's check of contribution 0, which recomputes that hash
 * over every point of the key and over H's points τ^(i+d) − τ^i, where ffjavascript's main-thread
 * conversions cost more than the sums themselves.
 */
#include "bn254-fq.h"

static const u32 PLAIN_ONE[NL] = {1, 0, 0, 0, 0, 0, 0, 0};

/* 32 bytes big-endian of the standard form of a (Montgomery). */
static void fe_write_be(u8 *out, const u32 *a) {
  u32 t[NL];
  fe_mul(t, a, PLAIN_ONE); /* a·R⁻¹: out of Montgomery form */
  for (int i = 0; i < NL; i++) {
    const u32 limb = t[NL - 1 - i];
    out[4 * i] = (u8)(limb >> 24);
    out[4 * i + 1] = (u8)(limb >> 16);
    out[4 * i + 2] = (u8)(limb >> 8);
    out[4 * i + 3] = (u8)limb;
  }
}

static void write_uncompressed(u8 *out, const u32 *x, const u32 *y) {
  fe_write_be(out, x);
  fe_write_be(out + FB, y);
}

static int is_infinity(const u8 *p) { return fe_is_zero(X(p)) && fe_is_zero(Y(p)); }

/* out[i] = uncompressed(points[i]) for n affine points (zkey layout); out may be points. */
__attribute__((export_name("g1_to_uncompressed")))
void g1_to_uncompressed(const u8 *points, u32 n, u8 *out) {
  for (u32 i = 0; i < n; i++) {
    const u8 *p = points + (u64)i * PB;
    u32 x[NL], y[NL];
    fe_copy(x, X(p));
    fe_copy(y, Y(p));
    if (fe_is_zero(x) && fe_is_zero(y)) {
      for (int b = 0; b < PB; b++) out[(u64)i * PB + b] = 0;
      continue;
    }
    write_uncompressed(out + (u64)i * PB, x, y);
  }
}

/* Bytes of scratch g1_sub_to_uncompressed needs for n pairs. */
__attribute__((export_name("g1_sub_scratch_bytes")))
u32 g1_sub_scratch_bytes(u32 n) { return 2 * n * FB + n; }

/*
 * out[i] = uncompressed(a[i] − b[i]) for n pairs of affine points (zkey layout), with one field
 * inversion for all of them (Montgomery's trick). Every case of affine addition is handled:
 * either operand at infinity, a = b (the difference vanishes), a = −b (a doubling).
 */
__attribute__((export_name("g1_sub_to_uncompressed")))
void g1_sub_to_uncompressed(const u8 *a, const u8 *b, u32 n, u8 *scratch, u8 *out) {
  u32 *den = (u32 *)scratch;            /* the denominators, then their inverses */
  u32 *pre = den + (u64)n * NL;         /* running products before each denominator */
  u8 *kind = (u8 *)(pre + (u64)n * NL); /* 0 addition, 1 doubling, 2 no inversion needed */
  u32 run[NL], inv[NL], t[NL];
  fe_copy(run, ONE);
  for (u32 i = 0; i < n; i++) {
    const u8 *p = a + (u64)i * PB, *q = b + (u64)i * PB;
    u32 *d = den + (u64)i * NL;
    u32 negqy[NL];
    fe_neg(negqy, Y(q));
    if (is_infinity(p) || is_infinity(q)) {
      fe_copy(d, ONE);
      kind[i] = 2;
    } else if (!fe_eq(X(p), X(q))) {
      fe_sub(d, X(q), X(p));
      kind[i] = 0;
    } else if (fe_eq(Y(p), negqy)) {
      /* a = −b: a − b = 2a; y = 0 has no point on BN254 (odd order), so 2y is invertible. */
      fe_add(d, Y(p), Y(p));
      kind[i] = 1;
    } else {
      fe_copy(d, ONE); /* a = b: the difference is infinity */
      kind[i] = 2;
    }
    fe_copy(pre + (u64)i * NL, run);
    fe_mul(run, run, d);
  }
  fe_inv(inv, run);
  for (u32 i = n; i-- > 0;) {
    u32 *d = den + (u64)i * NL;
    fe_mul(t, inv, pre + (u64)i * NL);
    fe_mul(inv, inv, d);
    fe_copy(d, t);
  }
  for (u32 i = 0; i < n; i++) {
    const u8 *p = a + (u64)i * PB, *q = b + (u64)i * PB;
    u8 *r = out + (u64)i * PB;
    u32 negqy[NL], lambda[NL], x3[NL], y3[NL];
    fe_neg(negqy, Y(q));
    if (kind[i] == 2) {
      if (is_infinity(q) && !is_infinity(p)) write_uncompressed(r, X(p), Y(p));
      else if (is_infinity(p) && !is_infinity(q)) write_uncompressed(r, X(q), negqy);
      else for (int k = 0; k < PB; k++) r[k] = 0;
      continue;
    }
    if (kind[i] == 0) {
      fe_sub(lambda, negqy, Y(p));
    } else {
      u32 xx[NL];
      fe_mul(xx, X(p), X(p));
      fe_add(lambda, xx, xx);
      fe_add(lambda, lambda, xx);
    }
    fe_mul(lambda, lambda, den + (u64)i * NL);
    fe_mul(x3, lambda, lambda);
    fe_sub(x3, x3, X(p));
    fe_sub(x3, x3, X(q));
    fe_sub(t, X(p), x3);
    fe_mul(t, lambda, t);
    fe_sub(y3, t, Y(p));
    write_uncompressed(r, x3, y3);
  }
}

/*
 * out[i] = uncompressed(points[i]) for n affine G2 points (zkey layout: x.c0, x.c1, y.c0, y.c1, 32
 * bytes each, Montgomery), as ffjavascript's G2 batchLEMtoU writes them: each coordinate's 64 bytes
 * reversed, so x.c1 then x.c0, then y.c1 then y.c0, each 32 bytes big-endian in standard form; the
 * point at infinity as 128 zero bytes. For init's circuit hash over B2; out may be points.
 */
__attribute__((export_name("g2_to_uncompressed")))
void g2_to_uncompressed(const u8 *points, u32 n, u8 *out) {
  for (u32 i = 0; i < n; i++) {
    const u8 *p = points + (u64)i * 2 * PB;
    u8 *o = out + (u64)i * 2 * PB;
    u32 c[4][NL];
    u32 any = 0;
    for (int k = 0; k < 4; k++) {
      fe_copy(c[k], (const u32 *)(p + k * FB));
      any |= !fe_is_zero(c[k]);
    }
    if (!any) {
      for (int b = 0; b < 2 * PB; b++) o[b] = 0;
      continue;
    }
    fe_write_be(o, c[1]);
    fe_write_be(o + FB, c[0]);
    fe_write_be(o + 2 * FB, c[3]);
    fe_write_be(o + 3 * FB, c[2]);
  }
}
