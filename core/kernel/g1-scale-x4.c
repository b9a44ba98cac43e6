/*
 * g1-scale-x4: g1-scale.c's contribution kernel (a batch of BN254 G1 points times ONE scalar,
 * walking the same GLV / width-5 NAF chain in lockstep, affine, one shared inversion a step) with
 * four points in the four lanes of every WebAssembly SIMD128 vector (bn254-fq-rr-x4.h). Built into
 * a module of its own with -msimd128 (build-kernel-wasm.ts), which a runtime without SIMD refuses;
 * g1-scale-kernel.ts then falls back to g1-scale.c. Same schedule, same input and output layout,
 * same bytes out.
 *
 * Beyond the lanes it makes fewer products a point than g1-scale.c (docs/kernel.md counts them):
 * - a doubling followed by an addition (2P + Q, most of the chain's additions) is done as
 *   (P + Q) + P without P + Q's y (Eisentraeger-Lauter-Montgomery): 11 products instead of 13;
 * - phi's table (beta·x of each odd multiple) is made once, 8 products, instead of one product at
 *   each of the ~21 additions of phi(P)'s multiples;
 * - the four lanes' running products are inverted with one scalar inversion between them, over
 *   windows of the exponent (rr_inv_window).
 * And fewer passes of additions and subtractions a step (rr4_sub2, slope_numerator), those that only
 * feed a product without their carries (the loose forms of bn254-fq-rr-x4.h): a product's result
 * depends on the numbers it is given, not on their limbs, so the bytes out are the same.
 * The planner (g1-scale-chain.ts) checks that the fused steps never meet equal or opposite points.
 *
 * Points are grouped by four: a group is x then y, each an X4 (9 vectors, 288 bytes a group); the
 * table is entry-major (ENTRY in scale_batch). A batch that is not a multiple of four is padded with
 * the generator, as the point at infinity is.
 */
#include "bn254-fq-rr-x4.h"

#define TABLE 8                    /* odd multiples 1,3,...,15 of each point */
#define GV (2 * RL)                /* vectors a group of points: x then y */
#define TV (3 * RL)                /* vectors a table entry: x, y, beta·x */
#define GX(p) (p)
#define GY(p) ((p) + RL)
#define TPHI(p) ((p) + 2 * RL)

/*
 * The per-group scratch of a step: running products, and the fused step's lambda and x. Not the
 * denominators: the backward pass makes each again from what it reads anyway (a loose sum or
 * difference, 9 vector operations), which is cheaper than writing and reading it back, and keeps
 * what a step touches smaller.
 */
struct Scratch {
  V *pre, *lam, *x3;
};

/*
 * r = a² (scalar, bn254-fq-rr.h's form): rr_mul(r, a, a) with the squares' block products, 36
 * multiplications instead of 54 before the same reduction, so the same limbs. Kept here, not in
 * bn254-fq-rr.h, whose compiled bytes (the scalar walk's module) a change there would move.
 */
__attribute__((noinline)) static void rr_sqr(u32 *r, const u32 *a) {
  u64 x[RL], sx[RL], p[6][5];
  _Pragma("clang loop unroll(full)") for (int i = 0; i < RL; i++) x[i] = a[i];
  _Pragma("clang loop unroll(full)") for (int i = 0; i < 3; i++) {
    sx[i] = x[i] + x[3 + i];
    sx[3 + i] = x[i] + x[6 + i];
    sx[6 + i] = x[3 + i] + x[6 + i];
  }
  const u64 *blocks[6] = {x, x + 3, x + 6, sx, sx + 3, sx + 6};
  _Pragma("clang loop unroll(full)") for (int b = 0; b < 6; b++) {
    const u64 *v = blocks[b];
    p[b][0] = v[0] * v[0];
    p[b][1] = 2 * v[0] * v[1];
    p[b][2] = 2 * v[0] * v[2] + v[1] * v[1];
    p[b][3] = 2 * v[1] * v[2];
    p[b][4] = v[2] * v[2];
  }
  u64 t[2 * RL] = {0};
  _Pragma("clang loop unroll(full)") for (int k = 0; k < 5; k++) {
    t[k] += p[0][k];
    t[3 + k] += p[3][k] - p[0][k] - p[1][k];
    t[6 + k] += p[1][k] + p[4][k] - p[0][k] - p[2][k];
    t[9 + k] += p[5][k] - p[1][k] - p[2][k];
    t[12 + k] += p[2][k];
  }
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

static inline int qm2_bit(int i) { return (int)((QM2[i >> 5] >> (i & 31)) & 1); }

/*
 * r = 1/a by Fermat, a^(q-2), as rr_inv but over windows of up to 4 bits of the exponent (odd
 * powers a, a^3, ..., a^15 made first) and with rr_sqr: 253 squarings and 55 products where
 * rr_inv makes 366 products. The exponent is q - 2, so the sequence of operations is fixed.
 */
static void rr_inv_window(u32 *r, const u32 *a) {
  u32 odd[8][RL], a2[RL], acc[RL];
  rr_copy(odd[0], a);
  rr_sqr(a2, a);
  for (int j = 1; j < 8; j++) rr_mul(odd[j], odd[j - 1], a2);
  int started = 0;
  for (int i = 253; i >= 0;) {
    if (!qm2_bit(i)) {
      if (started) rr_sqr(acc, acc);
      i--;
      continue;
    }
    int low = i >= 3 ? i - 3 : 0;
    while (!qm2_bit(low)) low++;
    int window = 0;
    for (int k = i; k >= low; k--) window = 2 * window + qm2_bit(k);
    if (started) {
      for (int k = i; k >= low; k--) rr_sqr(acc, acc);
      rr_mul(acc, acc, odd[window >> 1]);
    } else {
      rr_copy(acc, odd[window >> 1]);
      started = 1;
    }
    i = low - 1;
  }
  rr_copy(r, acc);
}

/*
 * inv = the inverse, lane by lane, of the four running products in total, with one scalar
 * inversion: 1/(r0 r1 r2 r3) times the other three lanes' product.
 */
static void invert_lanes(V *inv, const V *total) {
  u32 r[4][RL], p01[RL], p23[RL], p[RL], ip[RL], i01[RL], i23[RL], out[RL];
  for (int lane = 0; lane < 4; lane++) rr4_get_lane(r[lane], total, lane);
  rr_mul(p01, r[0], r[1]);
  rr_mul(p23, r[2], r[3]);
  rr_mul(p, p01, p23);
  rr_inv_window(ip, p);
  rr_mul(i01, ip, p23);
  rr_mul(i23, ip, p01);
  rr_mul(out, i01, r[1]);
  rr4_set_lane(inv, out, 0);
  rr_mul(out, i01, r[0]);
  rr4_set_lane(inv, out, 1);
  rr_mul(out, i23, r[3]);
  rr4_set_lane(inv, out, 2);
  rr_mul(out, i23, r[2]);
  rr4_set_lane(inv, out, 3);
}

/* The forward half of Montgomery's trick for group g: pre[g] = the product so far; run *= den. */
static inline void accumulate(V *run, const struct Scratch *s, u32 g, const V *den) {
  rr4_copy(s->pre + (u64)g * RL, run);
  rr4_mul(run, run, den);
}

/* The backward half for group g: t = 1/den, and inv drops den. */
static inline void peel(V *t, V *inv, const struct Scratch *s, u32 g, const V *den) {
  rr4_mul(t, inv, s->pre + (u64)g * RL);
  rr4_mul(inv, inv, den);
}

/* acc = 2 acc for ng groups at acc + g*stride. */
static void double_step(V *acc, u32 stride, u32 ng, const struct Scratch *s, const V *one) {
  V run[RL], inv[RL];
  rr4_copy(run, one);
  for (u32 g = 0; g < ng; g++) {
    V *a = acc + (u64)g * stride;
    V den[RL];
    rr4_add_loose(den, GY(a), GY(a));
    accumulate(run, s, g, den);
  }
  invert_lanes(inv, run);
  for (u32 g = ng; g-- > 0;) {
    V *a = acc + (u64)g * stride;
    V den[RL], t[RL], xx[RL], lambda[RL], x3[RL];
    rr4_add_loose(den, GY(a), GY(a));
    peel(t, inv, s, g, den);
    rr4_sqr(xx, GX(a));
    rr4_triple_loose(lambda, xx);
    rr4_mul(lambda, lambda, t);
    rr4_sqr(x3, lambda);
    rr4_sub2(x3, x3, GX(a), GX(a));
    rr4_sub_loose(t, GX(a), x3);
    rr4_mul(t, lambda, t);
    rr4_sub(GY(a), t, GY(a));
    rr4_copy(GX(a), x3);
  }
}

/* The addend's y, negated when the digit is negative. */
static inline void addend_y(V *qy, const V *q, int negate) {
  if (negate) rr4_neg(qy, GY(q));
  else rr4_copy(qy, GY(q));
}

/*
 * The slope's numerator for acc (a) plus the addend q: q's y minus a's, or with negate (q's y
 * negated) its opposite, y_q + y_a, which makes the slope's opposite: the caller then takes
 * x3 - x for x - x3 (the same y3 = lambda (x - x3) - y) and saves the negation, a full subtraction.
 */
static inline void slope_numerator(V *r, const V *q, const V *a, int negate) {
  if (negate) rr4_add_loose(r, GY(q), GY(a));
  else rr4_sub_loose(r, GY(q), GY(a));
}

/*
 * acc += add for ng groups: acc at acc + g*acc_stride, the addend at add + g*add_stride (a group's
 * or a table entry's x and y), its x replaced by the table's beta·x with use_phi, its y negated with
 * negate.
 */
static void add_step(V *acc, u32 acc_stride, u32 ng, const V *add, u32 add_stride, int use_phi, int negate,
                     const struct Scratch *s, const V *one) {
  V run[RL], inv[RL];
  rr4_copy(run, one);
  for (u32 g = 0; g < ng; g++) {
    V *a = acc + (u64)g * acc_stride;
    const V *q = add + (u64)g * add_stride;
    V den[RL];
    rr4_sub_loose(den, use_phi ? TPHI(q) : GX(q), GX(a));
    accumulate(run, s, g, den);
  }
  invert_lanes(inv, run);
  for (u32 g = ng; g-- > 0;) {
    V *a = acc + (u64)g * acc_stride;
    const V *q = add + (u64)g * add_stride;
    V den[RL], t[RL], lambda[RL], x3[RL];
    rr4_sub_loose(den, use_phi ? TPHI(q) : GX(q), GX(a));
    peel(t, inv, s, g, den);
    slope_numerator(lambda, q, a, negate);
    rr4_mul(lambda, lambda, t);
    rr4_sqr(x3, lambda);
    rr4_sub2(x3, x3, GX(a), use_phi ? TPHI(q) : GX(q));
    if (negate) rr4_sub_loose(t, x3, GX(a));
    else rr4_sub_loose(t, GX(a), x3);
    rr4_mul(t, lambda, t);
    rr4_sub(GY(a), t, GY(a));
    rr4_copy(GX(a), x3);
  }
}

/*
 * acc = 2 acc + add (a table entry, as add_step's) as (acc + add) + acc, two lockstep passes:
 * the first makes lambda1 and x3 of acc + add (not its y), the second adds acc to that point with
 * lambda2 = -lambda1 - 2y/(x3 - x). With mu = -lambda2: x4 = mu^2 - x - x3, y4 = mu(x4 - x) - y.
 * With negate, s->lam holds -lambda1 (slope_numerator), so mu = 2y/(x3 - x) - s->lam.
 */
static void double_add_step(V *acc, u32 ng, const V *add, u32 add_stride, int use_phi, int negate,
                            const struct Scratch *s, const V *one) {
  V run[RL], inv[RL];
  rr4_copy(run, one);
  for (u32 g = 0; g < ng; g++) {
    V *a = acc + (u64)g * GV;
    const V *q = add + (u64)g * add_stride;
    V den[RL];
    rr4_sub_loose(den, use_phi ? TPHI(q) : GX(q), GX(a));
    accumulate(run, s, g, den);
  }
  invert_lanes(inv, run);
  for (u32 g = ng; g-- > 0;) {
    V *a = acc + (u64)g * GV;
    const V *q = add + (u64)g * add_stride;
    V *lambda = s->lam + (u64)g * RL, *x3 = s->x3 + (u64)g * RL;
    V den[RL], t[RL];
    rr4_sub_loose(den, use_phi ? TPHI(q) : GX(q), GX(a));
    peel(t, inv, s, g, den);
    slope_numerator(lambda, q, a, negate);
    rr4_mul(lambda, lambda, t);
    rr4_sqr(x3, lambda);
    rr4_sub2(x3, x3, GX(a), use_phi ? TPHI(q) : GX(q));
  }
  rr4_copy(run, one);
  for (u32 g = 0; g < ng; g++) {
    V *a = acc + (u64)g * GV;
    V den[RL];
    rr4_sub_loose(den, s->x3 + (u64)g * RL, GX(a));
    accumulate(run, s, g, den);
  }
  invert_lanes(inv, run);
  for (u32 g = ng; g-- > 0;) {
    V *a = acc + (u64)g * GV;
    const V *x3 = s->x3 + (u64)g * RL;
    V den[RL], t[RL], mu[RL], x4[RL];
    rr4_sub_loose(den, x3, GX(a));
    peel(t, inv, s, g, den);
    rr4_add_loose(mu, GY(a), GY(a));
    rr4_mul(mu, mu, t);
    if (negate) rr4_sub_lazy(mu, mu, s->lam + (u64)g * RL);
    else rr4_add_lazy(mu, mu, s->lam + (u64)g * RL);
    rr4_sqr(x4, mu);
    rr4_sub2(x4, x4, GX(a), x3);
    rr4_sub_loose(t, x4, GX(a));
    rr4_mul(t, mu, t);
    rr4_sub(GY(a), t, GY(a));
    rr4_copy(GX(a), x4);
  }
}

/* The point of pts, in the key's layout, that lane `lane` of group g holds; 0 past the batch's end. */
static inline const u32 *key_point(const u8 *pts, u32 n, u32 g, int lane) {
  const u32 i = 4 * g + (u32)lane;
  return i < n ? (const u32 *)(pts + (u64)i * PB) : 0;
}

/* Groups of the batch into the working form: the point at infinity and the padding walk as the generator (1, 2). */
static void enter(V *work, const u8 *pts, u32 n, u32 ng, u8 *was_zero, const V *from_key) {
  for (u32 g = 0; g < ng; g++) {
    V vx[RL], vy[RL];
    for (int lane = 0; lane < 4; lane++) {
      const u32 *p = key_point(pts, n, g, lane);
      const int zero = !p || (fe_is_zero(X(p)) && fe_is_zero(Y(p)));
      u32 x[RL], y[RL];
      was_zero[4 * g + lane] = (u8)zero;
      if (zero) {
        /* 1 and 2 in the key's form, so that the product below takes them to this one. */
        rr_unpack_key(x, ONE);
        u32 two[NL];
        fe_add(two, ONE, ONE);
        rr_unpack_key(y, two);
      } else {
        rr_unpack_key(x, X(p));
        rr_unpack_key(y, Y(p));
      }
      rr4_set_lane(vx, x, lane);
      rr4_set_lane(vy, y, lane);
    }
    V *w = work + (u64)g * GV;
    rr4_mul(GX(w), vx, from_key);
    rr4_mul(GY(w), vy, from_key);
  }
}

/* The walked points back to the key's layout, fully reduced; the point at infinity back to (0, 0). */
static void leave(u8 *pts, u32 n, u32 ng, const V *work, const u8 *was_zero, const V *to_key) {
  for (u32 g = 0; g < ng; g++) {
    const V *w = work + (u64)g * GV;
    V vx[RL], vy[RL];
    rr4_mul(vx, GX(w), to_key);
    rr4_mul(vy, GY(w), to_key);
    for (int lane = 0; lane < 4; lane++) {
      const u32 i = 4 * g + (u32)lane;
      if (i >= n) break;
      u32 *p = (u32 *)(pts + (u64)i * PB);
      if (was_zero[i]) {
        for (int k = 0; k < 2 * NL; k++) p[k] = 0;
        continue;
      }
      u32 x[RL], y[RL];
      rr4_get_lane(x, vx, lane);
      rr4_get_lane(y, vy, lane);
      rr_pack_key(X(p), x);
      rr_pack_key(Y(p), y);
    }
  }
}

/*
 * pts: n points in the key's layout, replaced by their multiples. tab: room for ceil(n/4) * 8
 * entries of 432 bytes. scratch: room for ceil(n/4) groups of 288 bytes (the walking points), 3
 * field elements of 144 bytes a group, and 4 bytes a group. sched, nsched, beta_key: g1-scale.c's.
 */
__attribute__((export_name("scale_batch")))
void scale_batch(u8 *pts, u32 n, u8 *tab, u8 *scratch, const i8 *sched, u32 nsched, const u32 *beta_key) {
  const u32 ng = (n + 3) / 4;
  V *work = (V *)scratch;
  struct Scratch s;
  s.pre = work + (u64)ng * GV;
  s.lam = s.pre + (u64)ng * RL;
  s.x3 = s.lam + (u64)ng * RL;
  u8 *was_zero = (u8 *)(s.x3 + (u64)ng * RL);
  V *table = (V *)tab;
  /*
   * Entry-major: entry j of every group side by side (group g's at entry(j) + g*TV), so that a step
   * reads its one entry of the batch in one stream, not 432 bytes in every group's 3,456.
   */
#define ENTRY(j) (table + (u64)(j) * ng * TV)
  rr4_init();
  u32 beta1[RL];
  rr_from_key(beta1, beta_key);
  const V *one = ONE_SPLAT, *from_key = FROM_KEY_SPLAT, *to_key = TO_KEY_SPLAT;
  V beta[RL];
  rr4_splat(beta, beta1);

  enter(work, pts, n, ng, was_zero, from_key);
  /* Table entry j = (2j+1) P, with beta·x beside it: work holds 2P while the table is built. */
  for (u32 g = 0; g < ng; g++) {
    rr4_copy(GX(ENTRY(0) + (u64)g * TV), GX(work + (u64)g * GV));
    rr4_copy(GY(ENTRY(0) + (u64)g * TV), GY(work + (u64)g * GV));
  }
  double_step(work, GV, ng, &s, one);
  for (u32 j = 1; j < TABLE; j++) {
    for (u32 g = 0; g < ng; g++) {
      V *entry = ENTRY(j) + (u64)g * TV;
      const V *previous = ENTRY(j - 1) + (u64)g * TV;
      rr4_copy(GX(entry), GX(previous));
      rr4_copy(GY(entry), GY(previous));
    }
    add_step(ENTRY(j), TV, ng, work, GV, 0, 0, &s, one);
  }
  for (u32 j = 0; j < TABLE; j++)
    for (u32 g = 0; g < ng; g++) {
      V *entry = ENTRY(j) + (u64)g * TV;
      rr4_mul(TPHI(entry), beta, GX(entry));
    }

  for (u32 i = 0; i < nsched;) {
    const int op = sched[2 * i];
    const int digit = sched[2 * i + 1];
    if (op == 0) {
      const int next = i + 1 < nsched ? sched[2 * i + 2] : -1;
      if (next == 1 || next == 2) {
        const int d = sched[2 * i + 3];
        double_add_step(work, ng, ENTRY((d < 0 ? -d : d) >> 1), TV, next == 2, d < 0, &s, one);
        i += 2;
      } else {
        double_step(work, GV, ng, &s, one);
        i += 1;
      }
      continue;
    }
    const V *entry = ENTRY((digit < 0 ? -digit : digit) >> 1);
    const int use_phi = op == 2 || op == 4;
    if (op == 1 || op == 2) {
      add_step(work, GV, ng, entry, TV, use_phi, digit < 0, &s, one);
    } else {
      for (u32 g = 0; g < ng; g++) {
        V *w = work + (u64)g * GV;
        const V *q = entry + (u64)g * TV;
        rr4_copy(GX(w), use_phi ? TPHI(q) : GX(q));
        addend_y(GY(w), q, digit < 0);
      }
    }
    i += 1;
  }
  leave(pts, n, ng, work, was_zero, to_key);
#undef ENTRY
}
