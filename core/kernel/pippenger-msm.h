/*
 * pippenger-msm: the kernel's multi-exponentiation sum_i s_i * P_i, written once for any short
 * Weierstrass curve y^2 = x^3 + b over a field the including file supplies; g1-msm.c instantiates
 * it over Fq in a reduced radix (BN254 G1), g1-compose.c over Fq in the key's own form (msm_fq32,
 * the reference it is compared with), g2-msm.c over Fq² (the twist that holds G2). No formula here
 * uses b.
 *
 * The including file defines, before including this header once:
 *   EL                       limbs of one field element (u32 each)
 *   EL_ONE                   the element 1 (Montgomery form), an array of EL limbs
 *   el_copy el_is_zero el_eq el_add el_sub el_neg el_mul el_sqr el_inv
 *                            the field's operations, each allowing its result to alias its inputs
 *                            (el_inv of zero is zero); el_eq and el_is_zero decide equality in the
 *                            field, whichever representatives the field keeps
 *   el_add_lazy el_sub_lazy  (optional) a sum and a difference that need only be fit for a product's
 *                            input (el_mul, el_sqr), for a field whose elements are lazily reduced
 *                            (bn254-fq-rr.h); el_add and el_sub by default
 *   EL_EXT el_from_ext el_to_ext
 *                            (optional) for a field that keeps its elements in another form than the
 *                            caller's points (g1-msm.c: bn254-fq-rr.h's reduced radix for points in
 *                            the key's layout): the limbs of an element as given, and the conversions
 *                            into the field's form and back, the latter to the exact bytes of the
 *                            caller's form. The points are converted once, into scratch, on entry.
 *   MSM_FN MSM_SCRATCH_FN    the names of the two exported functions
 *   MSM_WINDOWS_FN           (optional) the name of the exported window-sums variant of MSM_FN
 *
 * Points are what a zkey holds: affine, x then y, each EL (or EL_EXT) limbs little-endian; all zero
 * is the point at infinity. Scalars are little-endian, `sb` bytes each, every one below 2^bits.
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

typedef int32_t i32;

#ifndef el_add_lazy
#define el_add_lazy el_add
#define el_sub_lazy el_sub
#endif

#define EL_BYTES (4 * (EL))
#define PT_BYTES (2 * EL_BYTES)
#define PT_X(p) ((u32 *)(p))
#define PT_Y(p) ((u32 *)(p) + (EL))
#ifdef EL_EXT
#define EXT_PT_BYTES (8 * (EL_EXT)) /* a point as given and returned */
#define EXT_POINTS_BYTES(n) align64((n) * PT_BYTES)
#else
#define EXT_PT_BYTES PT_BYTES
#define EXT_POINTS_BYTES(n) 0
#endif
#define MSM_STRINGIFY_(name) #name
#define MSM_STRINGIFY(name) MSM_STRINGIFY_(name)

/* Jacobian point (X/Z^2, Y/Z^3); Z = 0 is infinity. */
typedef struct { u32 x[EL], y[EL], z[EL]; } jac;

static void jac_set_inf(jac *p) {
  for (int i = 0; i < EL; i++) p->x[i] = p->y[i] = p->z[i] = 0;
}

/* p = 2p (dbl-2009-l, a = 0). Infinity, and a point of order 2 (Y = 0), give Z3 = 2YZ = 0. */
static void jac_double(jac *p) {
  u32 a[EL], b[EL], c[EL], d[EL], e[EL], f[EL], t[EL];
  el_sqr(a, p->x);
  el_sqr(b, p->y);
  el_sqr(c, b);
  el_add(t, p->x, b);
  el_sqr(t, t);
  el_sub(t, t, a);
  el_sub(t, t, c);
  el_add(d, t, t);
  el_add(e, a, a);
  el_add(e, e, a);
  el_sqr(f, e);
  el_mul(t, p->y, p->z);
  el_add(p->z, t, t);
  el_sub(p->x, f, d);
  el_sub(p->x, p->x, d);
  el_sub(t, d, p->x);
  el_mul(t, e, t);
  el_add(c, c, c);
  el_add(c, c, c);
  el_add(c, c, c);
  el_sub(p->y, t, c);
}

/* p += q for q affine, not infinity (madd-2007-bl, with the equal and opposite cases). */
static void jac_add_affine(jac *p, const u8 *q) {
  if (el_is_zero(p->z)) {
    el_copy(p->x, PT_X(q));
    el_copy(p->y, PT_Y(q));
    el_copy(p->z, EL_ONE);
    return;
  }
  u32 z1z1[EL], u2[EL], s2[EL], h[EL], hh[EL], i4[EL], j[EL], r[EL], v[EL], t[EL];
  el_sqr(z1z1, p->z);
  el_mul(u2, PT_X(q), z1z1);
  el_mul(s2, PT_Y(q), p->z);
  el_mul(s2, s2, z1z1);
  el_sub(h, u2, p->x);
  el_sub(r, s2, p->y);
  if (el_is_zero(h)) {
    if (el_is_zero(r)) jac_double(p);
    else jac_set_inf(p);
    return;
  }
  el_add(r, r, r);
  el_sqr(hh, h);
  el_add(i4, hh, hh);
  el_add(i4, i4, i4);
  el_mul(j, h, i4);
  el_mul(v, p->x, i4);
  el_add(t, p->z, h);
  el_sqr(t, t);
  el_sub(t, t, z1z1);
  el_sub(p->z, t, hh);
  el_sqr(p->x, r);
  el_sub(p->x, p->x, j);
  el_sub(p->x, p->x, v);
  el_sub(p->x, p->x, v);
  el_sub(t, v, p->x);
  el_mul(t, r, t);
  el_mul(j, p->y, j);
  el_add(j, j, j);
  el_sub(p->y, t, j);
}

/* p += q, both Jacobian (add-2007-bl, with infinity, equal and opposite cases). */
static void jac_add(jac *p, const jac *q) {
  if (el_is_zero(q->z)) return;
  if (el_is_zero(p->z)) {
    el_copy(p->x, q->x);
    el_copy(p->y, q->y);
    el_copy(p->z, q->z);
    return;
  }
  u32 z1z1[EL], z2z2[EL], u1[EL], u2[EL], s1[EL], s2[EL], h[EL], i[EL], j[EL], r[EL], v[EL], t[EL];
  el_sqr(z1z1, p->z);
  el_sqr(z2z2, q->z);
  el_mul(u1, p->x, z2z2);
  el_mul(u2, q->x, z1z1);
  el_mul(s1, p->y, q->z);
  el_mul(s1, s1, z2z2);
  el_mul(s2, q->y, p->z);
  el_mul(s2, s2, z1z1);
  el_sub(h, u2, u1);
  el_sub(r, s2, s1);
  if (el_is_zero(h)) {
    if (el_is_zero(r)) jac_double(p);
    else jac_set_inf(p);
    return;
  }
  el_add(r, r, r);
  el_add(i, h, h);
  el_sqr(i, i);
  el_mul(j, h, i);
  el_mul(v, u1, i);
  el_add(t, p->z, q->z);
  el_sqr(t, t);
  el_sub(t, t, z1z1);
  el_sub(t, t, z2z2);
  el_mul(p->z, t, h);
  el_sqr(p->x, r);
  el_sub(p->x, p->x, j);
  el_sub(p->x, p->x, v);
  el_sub(p->x, p->x, v);
  el_sub(t, v, p->x);
  el_mul(t, r, t);
  el_mul(s1, s1, j);
  el_add(s1, s1, s1);
  el_sub(p->y, t, s1);
}

/* Bits [off, off + c) of a little-endian scalar of sb bytes (c <= 24). */
static u32 scalar_bits(const u8 *s, u32 sb, u32 off, u32 c) {
  u32 first = off >> 3, last = (off + c + 7) >> 3;
  if (last > sb) last = sb;
  u64 acc = 0;
  for (u32 b = last; b-- > first;) acc = (acc << 8) | s[b];
  return (u32)(acc >> (off & 7)) & ((1u << c) - 1);
}

/*
 * Buckets are summed a group at a time, each group's points about 1 MiB (a core's L2 cache here),
 * rather than all of a window's at once: every round of the tree then finds its points, their
 * denominators and prefix products in cache instead of streaming the whole window's (tens of MB)
 * through memory each round. A round costs an inversion more per group (about 380 products, some
 * 2 % of a window); measured 2-14 % faster at 2^18 and 2^20 points on a loaded machine.
 */
#define MSM_GROUP_POINTS ((1u << 20) / PT_BYTES)

static u32 windows_for(u32 bits, u32 c) { return bits / c + 1; }

static u32 align64(u32 x) { return (x + 63u) & ~63u; }

/* Bytes of scratch MSM_FN needs for n points in windows of c bits over scalars below 2^bits. */
__attribute__((export_name(MSM_STRINGIFY(MSM_SCRATCH_FN))))
u32 MSM_SCRATCH_FN(u32 n, u32 bits, u32 c) {
  const u32 nw = windows_for(bits, c), buckets = 1u << (c - 1);
  return align64(n * nw * 4) + align64(3 * buckets * 4) + align64(n * PT_BYTES) +
         2 * align64((n / 2 + 1) * EL_BYTES) + align64(n / 2 + 1) + EXT_POINTS_BYTES(n);
}

/* What a pair of a bucket's tree becomes: kind[] of reduce_buckets. */
enum { PAIR_ADD = 0, PAIR_DOUBLE = 1, PAIR_VANISH = 2 };

/*
 * Sums the points of each bucket, the bucket's points being work[start[b] .. start[b] + cnt[b]),
 * by rounds of pairwise affine additions; leaves cnt[b] <= 1 with the sum (if any) at start[b].
 */
static void reduce_buckets(u8 *work, const u32 *start, u32 *cnt, u32 buckets, u32 *den, u32 *pre, u8 *kind) {
  for (;;) {
    u32 run[EL], inv[EL], t[EL];
    u32 pairs = 0;
    el_copy(run, EL_ONE);
    for (u32 b = 0; b < buckets; b++) {
      const u32 m = cnt[b];
      for (u32 j = 0; j + 1 < m; j += 2) {
        const u8 *p = work + (u64)(start[b] + j) * PT_BYTES, *q = p + PT_BYTES;
        u32 *d = den + (u64)pairs * EL;
        if (!el_eq(PT_X(p), PT_X(q))) {
          el_sub_lazy(d, PT_X(q), PT_X(p));
          kind[pairs] = PAIR_ADD;
        } else if (el_eq(PT_Y(p), PT_Y(q)) && !el_is_zero(PT_Y(p))) {
          el_add_lazy(d, PT_Y(p), PT_Y(p));
          kind[pairs] = PAIR_DOUBLE;
        } else {
          /* q = -p, or p = q of order 2 (y = 0; neither G1 nor the twist has such a point, both
           * being of odd order, but 2y must never reach the shared inversion): the pair vanishes. */
          el_copy(d, EL_ONE);
          kind[pairs] = PAIR_VANISH;
        }
        el_copy(pre + (u64)pairs * EL, run);
        el_mul(run, run, d);
        pairs++;
      }
    }
    if (pairs == 0) return;
    el_inv(inv, run);
    for (u32 k = pairs; k-- > 0;) {
      u32 *d = den + (u64)k * EL;
      el_mul(t, inv, pre + (u64)k * EL);
      el_mul(inv, inv, d);
      el_copy(d, t);
    }
    u32 k = 0;
    for (u32 b = 0; b < buckets; b++) {
      const u32 m = cnt[b];
      if (m < 2) continue;
      u8 *base = work + (u64)start[b] * PT_BYTES;
      u32 out = 0;
      for (u32 j = 0; j + 1 < m; j += 2, k++) {
        if (kind[k] == PAIR_VANISH) continue;
        const u8 *p = base + (u64)j * PT_BYTES, *q = p + PT_BYTES;
        u32 lambda[EL], x3[EL], y3[EL];
        if (kind[k] == PAIR_ADD) {
          el_sub_lazy(lambda, PT_Y(q), PT_Y(p));
        } else {
          u32 xx[EL];
          el_sqr(xx, PT_X(p));
          el_add(lambda, xx, xx);
          el_add_lazy(lambda, lambda, xx);
        }
        el_mul(lambda, lambda, den + (u64)k * EL);
        el_sqr(x3, lambda);
        el_sub(x3, x3, PT_X(p));
        el_sub(x3, x3, PT_X(q));
        el_sub_lazy(t, PT_X(p), x3);
        el_mul(t, lambda, t);
        el_sub(y3, t, PT_Y(p));
        /* out <= j/2 < j: the slot written was read in an earlier pair (or is p itself). */
        u8 *r = base + (u64)out * PT_BYTES;
        el_copy(PT_X(r), x3);
        el_copy(PT_Y(r), y3);
        out++;
      }
      if (m & 1) {
        u8 *r = base + (u64)out * PT_BYTES;
        const u8 *last = base + (u64)(m - 1) * PT_BYTES;
        el_copy(PT_X(r), PT_X(last));
        el_copy(PT_Y(r), PT_Y(last));
        out++;
      }
      cnt[b] = out;
    }
  }
}

/* The scratch regions of an MSM call, as MSM_SCRATCH_FN sizes them. */
typedef struct {
  i32 *digits;
  u32 *cnt, *start, *fill, *den, *pre;
  u8 *work, *kind, *pts;
} msm_scratch;

static msm_scratch msm_scratch_at(u8 *scratch, u32 n, u32 nw, u32 buckets) {
  msm_scratch m;
  m.digits = (i32 *)scratch;
  m.cnt = (u32 *)(scratch + align64(n * nw * 4));
  m.start = m.cnt + buckets;
  m.fill = m.start + buckets;
  m.work = (u8 *)m.cnt + align64(3 * buckets * 4);
  m.den = (u32 *)(m.work + align64(n * PT_BYTES));
  m.pre = (u32 *)((u8 *)m.den + align64((n / 2 + 1) * EL_BYTES));
  m.kind = (u8 *)m.pre + align64((n / 2 + 1) * EL_BYTES);
  m.pts = m.kind + align64(n / 2 + 1);
  return m;
}

/* The n points in the field's own form: the caller's, or with EL_EXT their conversion into m->pts. */
static const u8 *msm_points_in(const u8 *bases, u32 n, const msm_scratch *m) {
#ifdef EL_EXT
  for (u32 i = 0; i < n; i++) {
    const u32 *p = (const u32 *)(bases + (u64)i * EXT_PT_BYTES);
    u8 *r = m->pts + (u64)i * PT_BYTES;
    el_from_ext(PT_X(r), p);
    el_from_ext(PT_Y(r), p + (EL_EXT));
  }
  return m->pts;
#else
  (void)n;
  (void)m;
  return bases;
#endif
}

/*
 * The signed digits of every scalar, lowest window first: digit d_w of window w lies in
 * [-2^(c-1) + 1, 2^(c-1)] (the last window takes the final carry unsigned), and
 * s = sum_w d_w 2^(c w). A point at infinity gets zero digits.
 */
static void msm_digits(const u8 *bases, const u8 *scalars, u32 n, u32 sb, u32 nw, u32 c, i32 *digits) {
  const i32 half = (i32)(1u << (c - 1)), full = (i32)(1u << c);
  for (u32 i = 0; i < n; i++) {
    const u8 *p = bases + (u64)i * PT_BYTES;
    const int infinity = el_is_zero(PT_X(p)) && el_is_zero(PT_Y(p));
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
}

/* sum = sum_i d_{w,i} P_i, the sum of window w: points sorted into buckets, buckets reduced, weighted. */
static void msm_window_sum(const u8 *bases, u32 n, u32 nw, u32 w, u32 buckets, const msm_scratch *m, jac *sum) {
  for (u32 b = 0; b < buckets; b++) m->cnt[b] = 0;
  for (u32 i = 0; i < n; i++) {
    const i32 d = m->digits[(u64)i * nw + w];
    if (d != 0) m->cnt[(d < 0 ? -d : d) - 1]++;
  }
  u32 at = 0;
  for (u32 b = 0; b < buckets; b++) {
    m->start[b] = m->fill[b] = at;
    at += m->cnt[b];
  }
  for (u32 i = 0; i < n; i++) {
    const i32 d = m->digits[(u64)i * nw + w];
    if (d == 0) continue;
    const u8 *p = bases + (u64)i * PT_BYTES;
    u8 *r = m->work + (u64)(m->fill[(d < 0 ? -d : d) - 1]++) * PT_BYTES;
    el_copy(PT_X(r), PT_X(p));
    if (d < 0) el_neg(PT_Y(r), PT_Y(p));
    else el_copy(PT_Y(r), PT_Y(p));
  }
  for (u32 first = 0, last; first < buckets; first = last) {
    u32 points = 0;
    for (last = first; last < buckets && points < MSM_GROUP_POINTS; last++) points += m->cnt[last];
    reduce_buckets(m->work, m->start + first, m->cnt + first, last - first, m->den, m->pre, m->kind);
  }
  /* sum_b (b+1) B_b = sum_b running_b, running_b = B_b + B_{b+1} + ... */
  jac running;
  jac_set_inf(&running);
  jac_set_inf(sum);
  for (u32 b = buckets; b-- > 0;) {
    if (m->cnt[b]) jac_add_affine(&running, m->work + (u64)m->start[b] * PT_BYTES);
    jac_add(sum, &running);
  }
}

/* out (EXT_PT_BYTES, the caller's form) = p in affine coordinates, all zero for infinity. */
static void jac_to_affine_out(const jac *p, u8 *out) {
  if (el_is_zero(p->z)) {
    for (int b = 0; b < EXT_PT_BYTES; b++) out[b] = 0;
    return;
  }
  u32 zi[EL], zi2[EL], t[EL], x[EL], y[EL];
  el_inv(zi, p->z);
  el_sqr(zi2, zi);
  el_mul(x, p->x, zi2);
  el_mul(t, zi2, zi);
  el_mul(y, p->y, t);
#ifdef EL_EXT
  el_to_ext((u32 *)out, x);
  el_to_ext((u32 *)out + (EL_EXT), y);
#else
  el_copy(PT_X(out), x);
  el_copy(PT_Y(out), y);
#endif
}

/*
 * out (EXT_PT_BYTES, affine, all zero for infinity) = sum_i s_i * P_i over n points, scalars of sb
 * bytes each below 2^bits, windows of c bits (2 <= c <= 20); scratch: MSM_SCRATCH_FN(n, bits, c).
 */
__attribute__((export_name(MSM_STRINGIFY(MSM_FN))))
void MSM_FN(const u8 *bases, const u8 *scalars, u32 n, u32 sb, u32 bits, u32 c, u8 *scratch, u8 *out) {
  const u32 nw = windows_for(bits, c), buckets = 1u << (c - 1);
  const msm_scratch m = msm_scratch_at(scratch, n, nw, buckets);
  const u8 *pts = msm_points_in(bases, n, &m);
  msm_digits(pts, scalars, n, sb, nw, c, m.digits);
  jac total, sum;
  jac_set_inf(&total);
  for (u32 w = nw; w-- > 0;) {
    for (u32 k = 0; k < c && !el_is_zero(total.z); k++) jac_double(&total);
    msm_window_sum(pts, n, nw, w, buckets, &m, &sum);
    jac_add(&total, &sum);
  }
  jac_to_affine_out(&total, out);
}

#ifdef MSM_WINDOWS_FN
/*
 * The window sums of MSM_FN instead of their total: out holds floor(bits / c) + 1 affine points
 * (EXT_PT_BYTES each, all zero for infinity), W_w = sum_i d_{w,i} P_i with the signed digits of
 * msm_digits, lowest window first, so that sum_i s_i P_i = sum_w 2^(c w) W_w. Each W_w is a
 * combination of the points with coefficients from a range of 2^c consecutive integers, which is
 * what the audit's subgroup argument needs (check-initial-key.ts). Same scratch as MSM_FN.
 */
__attribute__((export_name(MSM_STRINGIFY(MSM_WINDOWS_FN))))
void MSM_WINDOWS_FN(const u8 *bases, const u8 *scalars, u32 n, u32 sb, u32 bits, u32 c, u8 *scratch, u8 *out) {
  const u32 nw = windows_for(bits, c), buckets = 1u << (c - 1);
  const msm_scratch m = msm_scratch_at(scratch, n, nw, buckets);
  const u8 *pts = msm_points_in(bases, n, &m);
  msm_digits(pts, scalars, n, sb, nw, c, m.digits);
  jac sum;
  for (u32 w = 0; w < nw; w++) {
    msm_window_sum(pts, n, nw, w, buckets, &m, &sum);
    jac_to_affine_out(&sum, out + (u64)w * EXT_PT_BYTES);
  }
}
#endif
