/*
 * g1-scale: multiplies a batch of BN254 G1 points by ONE scalar, the whole of a Phase 2
 * contribution's heavy work (L and H times s^-1). Built to WebAssembly (see build-kernel-wasm.ts).
 *
 * Points are what a zkey holds: affine, x and y as 8 little-endian 32-bit limbs in Montgomery form
 * (R = 2^256), fully reduced; (0,0) is the point at infinity. Because every point gets the same
 * scalar, the whole batch walks one addition chain in lockstep: each step (a doubling, or adding
 * one odd multiple of P or of phi(P) = (beta*x, y) = lambda*P) is done in affine coordinates for
 * all points at once, sharing a single field inversion (Montgomery's simultaneous inversion).
 * The chain (GLV split of the scalar, width-5 NAF of both halves) is computed by the caller, which
 * also checks that no step of it can meet a doubling or an addition of equal or opposite points.
 *
 * The walk is all field products, so it runs in bn254-fq-rr.h's reduced radix (9 x 29-bit limbs,
 * lazily reduced), the fastest product measured in WebAssembly: each point is converted into it on
 * entry and back to the key's exact layout (fully reduced) on exit, so the output bytes are those
 * of the key's arithmetic.
 */
/* The walk inlines the field product, which makes it faster; the MSMs do not (docs/kernel.md). */
#define RR_MUL_INLINE
#include "bn254-fq-rr.h"

#define TABLE 8          /* odd multiples 1,3,...,15 of each point */

#define RX(p) ((u32 *)(p))
#define RY(p) ((u32 *)(p) + RL)

/*
 * One lockstep affine step for all n points: acc[i] += add[i] (add != 0) or acc[i] = 2 acc[i]
 * (add == 0). acc[i] is at acc + i*acc_stride, add[i] at add + i*add_stride, both in the working
 * form (RPB bytes a point). With use_phi the addend is phi(add[i]) = (beta*x, y); with negate its
 * y is negated. pre, den, qxs: n field elements (RB bytes) of scratch each; one: 1. The values
 * that only go into a product (a denominator, a slope's numerator, x - x3) are left unreduced.
 */
static void lockstep(u8 *acc, u32 acc_stride, u32 n, const u8 *add, u32 add_stride, int use_phi, int negate,
                     const u32 *beta, const u32 *one, u32 *pre, u32 *den, u32 *qxs) {
  u32 run[RL], inv[RL], t[RL], lambda[RL], x3[RL];
  const int doubling = add == 0;
  rr_copy(run, one);
  for (u32 i = 0; i < n; i++) {
    u8 *a = acc + (u64)i * acc_stride;
    u32 *d = den + (u64)i * RL;
    if (doubling) {
      rr_add_lazy(d, RY(a), RY(a));
    } else {
      const u8 *q = add + (u64)i * add_stride;
      u32 *qx = qxs + (u64)i * RL;
      if (use_phi) rr_mul(qx, beta, RX(q));
      else rr_copy(qx, RX(q));
      rr_sub_lazy(d, qx, RX(a));
    }
    rr_copy(pre + (u64)i * RL, run);
    rr_mul(run, run, d);
  }
  rr_inv(inv, run, one);
  for (u32 k = n; k-- > 0;) {
    u8 *a = acc + (u64)k * acc_stride;
    /* inv = 1 / (d_0 ... d_k); the inverse of d_k alone is inv * (d_0 ... d_{k-1}). */
    rr_mul(t, inv, pre + (u64)k * RL);
    rr_mul(inv, inv, den + (u64)k * RL);
    if (doubling) {
      u32 xx[RL];
      rr_mul(xx, RX(a), RX(a));
      rr_add(lambda, xx, xx);
      rr_add_lazy(lambda, lambda, xx);
      rr_mul(lambda, lambda, t);
      rr_mul(x3, lambda, lambda);
      rr_sub(x3, x3, RX(a));
      rr_sub(x3, x3, RX(a));
    } else {
      const u8 *q = add + (u64)k * add_stride;
      u32 qy[RL];
      if (negate) rr_neg(qy, RY(q));
      else rr_copy(qy, RY(q));
      rr_sub_lazy(lambda, qy, RY(a));
      rr_mul(lambda, lambda, t);
      rr_mul(x3, lambda, lambda);
      rr_sub(x3, x3, RX(a));
      rr_sub(x3, x3, qxs + (u64)k * RL);
    }
    rr_sub_lazy(t, RX(a), x3);
    rr_mul(t, lambda, t);
    rr_sub(RY(a), t, RY(a));
    rr_copy(RX(a), x3);
  }
}

static void copy_point(u8 *dst, const u8 *src) {
  for (int b = 0; b < RPB; b++) dst[b] = src[b];
}

/*
 * pts: n points in the key's layout, replaced by their multiples. tab: room for n * 8 points of
 * RPB bytes. scratch: room for n points of RPB bytes (the walking points), 3n field elements of RB
 * bytes, and n bytes. sched: nsched (op, digit) byte pairs: op 0 double; 1 add digit*P; 2 add
 * digit*phi(P); 3 set to digit*P; 4 set to digit*phi(P) (digit odd, |digit| <= 15).
 * beta_key: the cube root of unity in Fq (in the key's layout) that matches the caller's lambda.
 */
__attribute__((export_name("scale_batch")))
void scale_batch(u8 *pts, u32 n, u8 *tab, u8 *scratch, const i8 *sched, u32 nsched, const u32 *beta_key) {
  u8 *work = scratch;
  u32 *pre = (u32 *)(work + (u64)n * RPB);
  u32 *den = pre + (u64)n * RL;
  u32 *qxs = den + (u64)n * RL;
  u8 *was_zero = (u8 *)(qxs + (u64)n * RL);
  const u32 TS = TABLE * RPB;
  u32 one[RL], beta[RL];
  rr_from_key(one, ONE);
  rr_from_key(beta, beta_key);

  /* The point at infinity walks the chain as the generator (1, 2) and is put back at the end. */
  for (u32 i = 0; i < n; i++) {
    const u8 *p = pts + (u64)i * PB;
    u8 *w = work + (u64)i * RPB;
    was_zero[i] = fe_is_zero(X(p)) && fe_is_zero(Y(p));
    if (was_zero[i]) {
      rr_copy(RX(w), one);
      rr_add(RY(w), one, one);
    } else {
      rr_from_key(RX(w), X(p));
      rr_from_key(RY(w), Y(p));
    }
    copy_point(tab + (u64)i * TS, w);
  }
  /* Table entry j = (2j+1) P: work holds 2P while the table is built. */
  lockstep(work, RPB, n, 0, 0, 0, 0, beta, one, pre, den, qxs);
  for (u32 j = 1; j < TABLE; j++) {
    for (u32 i = 0; i < n; i++) copy_point(tab + (u64)i * TS + j * RPB, tab + (u64)i * TS + (j - 1) * RPB);
    lockstep(tab + j * RPB, TS, n, work, RPB, 0, 0, beta, one, pre, den, qxs);
  }

  for (u32 s = 0; s < nsched; s++) {
    const int op = sched[2 * s];
    const int digit = sched[2 * s + 1];
    const int negate = digit < 0;
    const u32 entry = (u32)((negate ? -digit : digit) >> 1);
    const int use_phi = op == 2 || op == 4;
    if (op == 0) {
      lockstep(work, RPB, n, 0, 0, 0, 0, beta, one, pre, den, qxs);
    } else if (op == 1 || op == 2) {
      lockstep(work, RPB, n, tab + entry * RPB, TS, use_phi, negate, beta, one, pre, den, qxs);
    } else {
      for (u32 i = 0; i < n; i++) {
        u8 *w = work + (u64)i * RPB;
        const u8 *q = tab + (u64)i * TS + entry * RPB;
        if (use_phi) rr_mul(RX(w), beta, RX(q));
        else rr_copy(RX(w), RX(q));
        if (negate) rr_neg(RY(w), RY(q));
        else rr_copy(RY(w), RY(q));
      }
    }
  }

  for (u32 i = 0; i < n; i++) {
    u8 *p = pts + (u64)i * PB;
    if (was_zero[i]) {
      for (int b = 0; b < PB; b++) p[b] = 0;
    } else {
      const u8 *w = work + (u64)i * RPB;
      rr_to_key(X(p), RX(w));
      rr_to_key(Y(p), RY(w));
    }
  }
}
