/*
 * g1-msm: a multi-exponentiation sum_i s_i * P_i over BN254 G1 (Pippenger), the whole cost of
 * verifying a link (random combinations of L and H with 64-bit scalars) and of the audit's check
 * of contribution 0 (256-bit scalars). Built with g1-scale.c into one WebAssembly module.
 *
 * Points are what a zkey holds (see bn254-fq.h); (0,0) is the point at infinity. Scalars are
 * little-endian, `sb` bytes each, every one below 2^bits.
 *
 * Per window of c bits the scalars give signed digits in [-2^(c-1), 2^(c-1)] (a digit above half
 * the window borrows from the next), so 2^(c-1) buckets serve both signs: a negative digit puts
 * -P in bucket |d|. Points are sorted into their buckets (counting sort), then every bucket is
 * summed as a tree: each round adds disjoint pairs inside every bucket, all of the round's pairs
 * sharing one field inversion (Montgomery's trick), in affine coordinates (about 6 products an
 * addition, against 11 for a mixed Jacobian one). Pairs are independent by construction, so no
 * conflict handling is needed; a pair of equal points is doubled and a pair of opposite points
 * vanishes, which is all the edge cases affine addition has. The buckets are then weighted by the
 * running-sum trick in Jacobian coordinates (few points, general formulas), and the windows
 * combined by doublings.
 */
#include "bn254-fq.h"

typedef int32_t i32;

static inline int fe_eq(const u32 *a, const u32 *b) {
  u32 acc = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) acc |= a[i] ^ b[i];
  return acc == 0;
}

/* Jacobian point (X/Z^2, Y/Z^3); Z = 0 is infinity. */
typedef struct { u32 x[NL], y[NL], z[NL]; } jac;

static void jac_set_inf(jac *p) {
  for (int i = 0; i < NL; i++) p->x[i] = p->y[i] = p->z[i] = 0;
}

/* p = 2p (dbl-2009-l, a = 0). Infinity stays infinity (Z3 = 2YZ = 0). */
static void jac_double(jac *p) {
  u32 a[NL], b[NL], c[NL], d[NL], e[NL], f[NL], t[NL];
  fe_mul(a, p->x, p->x);
  fe_mul(b, p->y, p->y);
  fe_mul(c, b, b);
  fe_add(t, p->x, b);
  fe_mul(t, t, t);
  fe_sub(t, t, a);
  fe_sub(t, t, c);
  fe_add(d, t, t);
  fe_add(e, a, a);
  fe_add(e, e, a);
  fe_mul(f, e, e);
  fe_mul(t, p->y, p->z);
  fe_add(p->z, t, t);
  fe_sub(p->x, f, d);
  fe_sub(p->x, p->x, d);
  fe_sub(t, d, p->x);
  fe_mul(t, e, t);
  fe_add(c, c, c);
  fe_add(c, c, c);
  fe_add(c, c, c);
  fe_sub(p->y, t, c);
}

/* p += q for q affine, not infinity (madd-2007-bl, with the equal and opposite cases). */
static void jac_add_affine(jac *p, const u8 *q) {
  if (fe_is_zero(p->z)) {
    fe_copy(p->x, X(q));
    fe_copy(p->y, Y(q));
    fe_copy(p->z, ONE);
    return;
  }
  u32 z1z1[NL], u2[NL], s2[NL], h[NL], hh[NL], i4[NL], j[NL], r[NL], v[NL], t[NL];
  fe_mul(z1z1, p->z, p->z);
  fe_mul(u2, X(q), z1z1);
  fe_mul(s2, Y(q), p->z);
  fe_mul(s2, s2, z1z1);
  fe_sub(h, u2, p->x);
  fe_sub(r, s2, p->y);
  if (fe_is_zero(h)) {
    if (fe_is_zero(r)) jac_double(p);
    else jac_set_inf(p);
    return;
  }
  fe_add(r, r, r);
  fe_mul(hh, h, h);
  fe_add(i4, hh, hh);
  fe_add(i4, i4, i4);
  fe_mul(j, h, i4);
  fe_mul(v, p->x, i4);
  fe_add(t, p->z, h);
  fe_mul(t, t, t);
  fe_sub(t, t, z1z1);
  fe_sub(p->z, t, hh);
  fe_mul(p->x, r, r);
  fe_sub(p->x, p->x, j);
  fe_sub(p->x, p->x, v);
  fe_sub(p->x, p->x, v);
  fe_sub(t, v, p->x);
  fe_mul(t, r, t);
  fe_mul(j, p->y, j);
  fe_add(j, j, j);
  fe_sub(p->y, t, j);
}

/* p += q, both Jacobian (add-2007-bl, with infinity, equal and opposite cases). */
static void jac_add(jac *p, const jac *q) {
  if (fe_is_zero(q->z)) return;
  if (fe_is_zero(p->z)) {
    fe_copy(p->x, q->x);
    fe_copy(p->y, q->y);
    fe_copy(p->z, q->z);
    return;
  }
  u32 z1z1[NL], z2z2[NL], u1[NL], u2[NL], s1[NL], s2[NL], h[NL], i[NL], j[NL], r[NL], v[NL], t[NL];
  fe_mul(z1z1, p->z, p->z);
  fe_mul(z2z2, q->z, q->z);
  fe_mul(u1, p->x, z2z2);
  fe_mul(u2, q->x, z1z1);
  fe_mul(s1, p->y, q->z);
  fe_mul(s1, s1, z2z2);
  fe_mul(s2, q->y, p->z);
  fe_mul(s2, s2, z1z1);
  fe_sub(h, u2, u1);
  fe_sub(r, s2, s1);
  if (fe_is_zero(h)) {
    if (fe_is_zero(r)) jac_double(p);
    else jac_set_inf(p);
    return;
  }
  fe_add(r, r, r);
  fe_add(i, h, h);
  fe_mul(i, i, i);
  fe_mul(j, h, i);
  fe_mul(v, u1, i);
  fe_add(t, p->z, q->z);
  fe_mul(t, t, t);
  fe_sub(t, t, z1z1);
  fe_sub(t, t, z2z2);
  fe_mul(p->z, t, h);
  fe_mul(p->x, r, r);
  fe_sub(p->x, p->x, j);
  fe_sub(p->x, p->x, v);
  fe_sub(p->x, p->x, v);
  fe_sub(t, v, p->x);
  fe_mul(t, r, t);
  fe_mul(s1, s1, j);
  fe_add(s1, s1, s1);
  fe_sub(p->y, t, s1);
}

/* Bits [off, off + c) of a little-endian scalar of sb bytes (c <= 24). */
static u32 scalar_bits(const u8 *s, u32 sb, u32 off, u32 c) {
  u32 first = off >> 3, last = (off + c + 7) >> 3;
  if (last > sb) last = sb;
  u64 acc = 0;
  for (u32 b = last; b-- > first;) acc = (acc << 8) | s[b];
  return (u32)(acc >> (off & 7)) & ((1u << c) - 1);
}

static u32 windows_for(u32 bits, u32 c) { return bits / c + 1; }

static u32 align64(u32 x) { return (x + 63u) & ~63u; }

/* Bytes of scratch msm() needs for n points in windows of c bits over scalars below 2^bits. */
__attribute__((export_name("msm_scratch_bytes")))
u32 msm_scratch_bytes(u32 n, u32 bits, u32 c) {
  const u32 nw = windows_for(bits, c), buckets = 1u << (c - 1);
  return align64(n * nw * 4) + align64(3 * buckets * 4) + align64(n * PB) + 2 * align64((n / 2 + 1) * FB) + align64(n / 2 + 1);
}

/*
 * Sums the points of each bucket, the bucket's points being work[start[b] .. start[b] + cnt[b]),
 * by rounds of pairwise affine additions; leaves cnt[b] <= 1 with the sum (if any) at start[b].
 */
static void reduce_buckets(u8 *work, const u32 *start, u32 *cnt, u32 buckets, u32 *den, u32 *pre, u8 *kind) {
  for (;;) {
    u32 run[NL], inv[NL], t[NL];
    u32 pairs = 0;
    fe_copy(run, ONE);
    for (u32 b = 0; b < buckets; b++) {
      const u32 m = cnt[b];
      for (u32 j = 0; j + 1 < m; j += 2) {
        const u8 *p = work + (u64)(start[b] + j) * PB, *q = p + PB;
        u32 *d = den + (u64)pairs * NL;
        if (!fe_eq(X(p), X(q))) {
          fe_sub(d, X(q), X(p));
          kind[pairs] = 0;
        } else if (fe_eq(Y(p), Y(q))) {
          /* y = 0 has no point on BN254 (odd order), so 2y is invertible. */
          fe_add(d, Y(p), Y(p));
          kind[pairs] = 1;
        } else {
          fe_copy(d, ONE);
          kind[pairs] = 2; /* q = -p: the pair vanishes */
        }
        fe_copy(pre + (u64)pairs * NL, run);
        fe_mul(run, run, d);
        pairs++;
      }
    }
    if (pairs == 0) return;
    fe_inv(inv, run);
    for (u32 k = pairs; k-- > 0;) {
      u32 *d = den + (u64)k * NL;
      fe_mul(t, inv, pre + (u64)k * NL);
      fe_mul(inv, inv, d);
      fe_copy(d, t);
    }
    u32 k = 0;
    for (u32 b = 0; b < buckets; b++) {
      const u32 m = cnt[b];
      if (m < 2) continue;
      u8 *base = work + (u64)start[b] * PB;
      u32 out = 0;
      for (u32 j = 0; j + 1 < m; j += 2, k++) {
        if (kind[k] == 2) continue;
        const u8 *p = base + (u64)j * PB, *q = p + PB;
        u32 lambda[NL], x3[NL], y3[NL];
        if (kind[k] == 0) {
          fe_sub(lambda, Y(q), Y(p));
        } else {
          u32 xx[NL];
          fe_mul(xx, X(p), X(p));
          fe_add(lambda, xx, xx);
          fe_add(lambda, lambda, xx);
        }
        fe_mul(lambda, lambda, den + (u64)k * NL);
        fe_mul(x3, lambda, lambda);
        fe_sub(x3, x3, X(p));
        fe_sub(x3, x3, X(q));
        fe_sub(t, X(p), x3);
        fe_mul(t, lambda, t);
        fe_sub(y3, t, Y(p));
        /* out <= j/2 < j: the slot written was read in an earlier pair (or is p itself). */
        u8 *r = base + (u64)out * PB;
        fe_copy(X(r), x3);
        fe_copy(Y(r), y3);
        out++;
      }
      if (m & 1) {
        u8 *r = base + (u64)out * PB;
        const u8 *last = base + (u64)(m - 1) * PB;
        fe_copy(X(r), X(last));
        fe_copy(Y(r), Y(last));
        out++;
      }
      cnt[b] = out;
    }
  }
}

/*
 * out (64 bytes, affine, (0,0) for infinity) = sum_i s_i * P_i over n points, scalars of sb bytes
 * each below 2^bits, windows of c bits (2 <= c <= 20); scratch: msm_scratch_bytes(n, bits, c).
 */
__attribute__((export_name("msm")))
void msm(const u8 *bases, const u8 *scalars, u32 n, u32 sb, u32 bits, u32 c, u8 *scratch, u8 *out) {
  const u32 nw = windows_for(bits, c), buckets = 1u << (c - 1);
  i32 *digits = (i32 *)scratch;
  u32 *cnt = (u32 *)(scratch + align64(n * nw * 4));
  u32 *start = cnt + buckets, *fill = start + buckets;
  u8 *work = (u8 *)cnt + align64(3 * buckets * 4);
  u32 *den = (u32 *)(work + align64(n * PB));
  u32 *pre = (u32 *)((u8 *)den + align64((n / 2 + 1) * FB));
  u8 *kind = (u8 *)pre + align64((n / 2 + 1) * FB);

  /* Signed digits, lowest window first; the last window takes the final carry unsigned. */
  const i32 half = (i32)buckets, full = (i32)(1u << c);
  for (u32 i = 0; i < n; i++) {
    const u8 *p = bases + (u64)i * PB;
    const int infinity = fe_is_zero(X(p)) && fe_is_zero(Y(p));
    const u8 *s = scalars + (u64)i * sb;
    i32 carry = 0;
    for (u32 w = 0; w < nw; w++) {
      i32 d = infinity ? 0 : (i32)scalar_bits(s, sb, w * c, c) + carry;
      carry = 0;
      if (w + 1 < nw && d > half) {
        d -= full;
        carry = 1;
      }
      digits[(u64)i * nw + w] = d;
    }
  }

  jac total;
  jac_set_inf(&total);
  for (u32 w = nw; w-- > 0;) {
    for (u32 k = 0; k < c && !fe_is_zero(total.z); k++) jac_double(&total);
    for (u32 b = 0; b < buckets; b++) cnt[b] = 0;
    for (u32 i = 0; i < n; i++) {
      const i32 d = digits[(u64)i * nw + w];
      if (d != 0) cnt[(d < 0 ? -d : d) - 1]++;
    }
    u32 at = 0;
    for (u32 b = 0; b < buckets; b++) {
      start[b] = fill[b] = at;
      at += cnt[b];
    }
    for (u32 i = 0; i < n; i++) {
      const i32 d = digits[(u64)i * nw + w];
      if (d == 0) continue;
      const u8 *p = bases + (u64)i * PB;
      u8 *r = work + (u64)(fill[(d < 0 ? -d : d) - 1]++) * PB;
      fe_copy(X(r), X(p));
      if (d < 0) fe_neg(Y(r), Y(p));
      else fe_copy(Y(r), Y(p));
    }
    reduce_buckets(work, start, cnt, buckets, den, pre, kind);
    /* sum_b (b+1) B_b = sum_b running_b, running_b = B_b + B_{b+1} + ... */
    jac running, sum;
    jac_set_inf(&running);
    jac_set_inf(&sum);
    for (u32 b = buckets; b-- > 0;) {
      if (cnt[b]) jac_add_affine(&running, work + (u64)start[b] * PB);
      jac_add(&sum, &running);
    }
    jac_add(&total, &sum);
  }

  if (fe_is_zero(total.z)) {
    for (int b = 0; b < PB; b++) out[b] = 0;
    return;
  }
  u32 zi[NL], zi2[NL], t[NL];
  fe_inv(zi, total.z);
  fe_mul(zi2, zi, zi);
  fe_mul(X(out), total.x, zi2);
  fe_mul(t, zi2, zi);
  fe_mul(Y(out), total.y, t);
}
