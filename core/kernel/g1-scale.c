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
 */
#include "bn254-fq.h"

#define TABLE 8          /* odd multiples 1,3,...,15 of each point */

/*
 * One lockstep affine step for all n points: acc[i] += add[i] (add != 0) or acc[i] = 2 acc[i]
 * (add == 0). acc[i] is at acc + i*acc_stride, add[i] at add + i*add_stride. With use_phi the
 * addend is phi(add[i]) = (beta*x, y); with negate its y is negated. pre, den, qxs: n field
 * elements of scratch each.
 */
static void lockstep(u8 *acc, u32 acc_stride, u32 n, const u8 *add, u32 add_stride, int use_phi, int negate,
                     const u32 *beta, u32 *pre, u32 *den, u32 *qxs) {
  u32 run[NL], inv[NL], t[NL], lambda[NL], x3[NL];
  const int doubling = add == 0;
  fe_copy(run, ONE);
  for (u32 i = 0; i < n; i++) {
    u8 *a = acc + (u64)i * acc_stride;
    u32 *d = den + (u64)i * NL;
    if (doubling) {
      fe_add(d, Y(a), Y(a));
    } else {
      const u8 *q = add + (u64)i * add_stride;
      u32 *qx = qxs + (u64)i * NL;
      if (use_phi) fe_mul(qx, beta, X(q));
      else fe_copy(qx, X(q));
      fe_sub(d, qx, X(a));
    }
    fe_copy(pre + (u64)i * NL, run);
    fe_mul(run, run, d);
  }
  fe_inv(inv, run);
  for (u32 k = n; k-- > 0;) {
    u8 *a = acc + (u64)k * acc_stride;
    /* inv = 1 / (d_0 ... d_k); the inverse of d_k alone is inv * (d_0 ... d_{k-1}). */
    fe_mul(t, inv, pre + (u64)k * NL);
    fe_mul(inv, inv, den + (u64)k * NL);
    if (doubling) {
      u32 xx[NL];
      fe_mul(xx, X(a), X(a));
      fe_add(lambda, xx, xx);
      fe_add(lambda, lambda, xx);
      fe_mul(lambda, lambda, t);
      fe_mul(x3, lambda, lambda);
      fe_sub(x3, x3, X(a));
      fe_sub(x3, x3, X(a));
    } else {
      const u8 *q = add + (u64)k * add_stride;
      u32 qy[NL];
      if (negate) fe_neg(qy, Y(q));
      else fe_copy(qy, Y(q));
      fe_sub(lambda, qy, Y(a));
      fe_mul(lambda, lambda, t);
      fe_mul(x3, lambda, lambda);
      fe_sub(x3, x3, X(a));
      fe_sub(x3, x3, qxs + (u64)k * NL);
    }
    fe_sub(t, X(a), x3);
    fe_mul(t, lambda, t);
    fe_sub(Y(a), t, Y(a));
    fe_copy(X(a), x3);
  }
}

static void copy_point(u8 *dst, const u8 *src) {
  for (int b = 0; b < PB; b++) dst[b] = src[b];
}

/*
 * pts: n points, replaced by their multiples. tab: room for n * 8 points. scratch: room for 3n
 * field elements plus n bytes. sched: nsched (op, digit) byte pairs: op 0 double; 1 add digit*P;
 * 2 add digit*phi(P); 3 set to digit*P; 4 set to digit*phi(P) (digit odd, |digit| <= 15).
 * beta: the cube root of unity in Fq (Montgomery form) that matches the caller's lambda.
 */
__attribute__((export_name("scale_batch")))
void scale_batch(u8 *pts, u32 n, u8 *tab, u8 *scratch, const i8 *sched, u32 nsched, const u32 *beta) {
  u32 *pre = (u32 *)scratch;
  u32 *den = pre + (u64)n * NL;
  u32 *qxs = den + (u64)n * NL;
  u8 *was_zero = (u8 *)(qxs + (u64)n * NL);
  const u32 TS = TABLE * PB;

  /* The point at infinity walks the chain as the generator (1, 2) and is put back at the end. */
  for (u32 i = 0; i < n; i++) {
    u8 *p = pts + (u64)i * PB;
    was_zero[i] = fe_is_zero(X(p)) && fe_is_zero(Y(p));
    if (was_zero[i]) {
      fe_copy(X(p), ONE);
      fe_add(Y(p), ONE, ONE);
    }
    copy_point(tab + (u64)i * TS, p);
  }
  /* Table entry j = (2j+1) P: pts holds 2P while the table is built. */
  lockstep(pts, PB, n, 0, 0, 0, 0, beta, pre, den, qxs);
  for (u32 j = 1; j < TABLE; j++) {
    for (u32 i = 0; i < n; i++) copy_point(tab + (u64)i * TS + j * PB, tab + (u64)i * TS + (j - 1) * PB);
    lockstep(tab + j * PB, TS, n, pts, PB, 0, 0, beta, pre, den, qxs);
  }

  for (u32 s = 0; s < nsched; s++) {
    const int op = sched[2 * s];
    const int digit = sched[2 * s + 1];
    const int negate = digit < 0;
    const u32 entry = (u32)((negate ? -digit : digit) >> 1);
    const int use_phi = op == 2 || op == 4;
    if (op == 0) {
      lockstep(pts, PB, n, 0, 0, 0, 0, beta, pre, den, qxs);
    } else if (op == 1 || op == 2) {
      lockstep(pts, PB, n, tab + entry * PB, TS, use_phi, negate, beta, pre, den, qxs);
    } else {
      for (u32 i = 0; i < n; i++) {
        u8 *p = pts + (u64)i * PB;
        const u8 *q = tab + (u64)i * TS + entry * PB;
        if (use_phi) fe_mul(X(p), beta, X(q));
        else fe_copy(X(p), X(q));
        if (negate) fe_neg(Y(p), Y(q));
        else fe_copy(Y(p), Y(q));
      }
    }
  }

  for (u32 i = 0; i < n; i++) {
    if (!was_zero[i]) continue;
    u8 *p = pts + (u64)i * PB;
    for (int b = 0; b < PB; b++) p[b] = 0;
  }
}
