/*
 * sparse-compose: the heavy work of `ceremony init` (contribution 0, byte for byte snarkjs's
 * `zkey new`): every point of the key's A, B1, B2 and IC/L sections is a sparse combination of ptau
 * points fixed by the r1cs, out_s = sum over the terms (c, s, m) of a matrix of m * base_c, where
 * base_c is the ptau's Lagrange point of constraint c (for IC/L: beta_c for A's terms, alpha_c for
 * B's, lambda_c for C's). Included once, after pippenger-msm.h (whose field and point primitives
 * it shares), by g1-compose.c over Fq and g2-msm.c over Fq² (B2).
 *
 * The r1cs is walked as it is stored, constraint by constraint (the bases of a chunk of
 * constraints arrive with it, so the ptau is read sequentially), and each term is added into its
 * output's accumulator, an affine point in the zkey's layout; a thread owns the accumulators of
 * its share of the signals (blocks of consecutive signals dealt so that every chunk of
 * constraints gives every thread work). A term costs what its scalar's length costs: m is reduced below r
 * and replaced by r - m with the base negated when that is shorter (so -1, -2 cost what 1, 2 do);
 * m = 1 is one addition; other terms are multiplied in batches by left-to-right signed binary
 * (NAF) in affine coordinates, every term of a batch stepping in lockstep and each step sharing
 * one field inversion (Montgomery's trick). The additions into the accumulators are batched the
 * same way (cp_accumulate: a bucket per accumulator, summed as pippenger-msm.h sums its buckets),
 * about 6 products each against 11 for a mixed Jacobian addition. Real circuits' coefficients
 * are mostly small (1, -1, small constants), which this makes cheap; a full-width one costs a
 * scalar multiplication (about 254 doublings and 85 additions). Degenerate additions (equal or
 * opposite points) are handled as reduce_buckets handles them, though honest inputs never meet
 * them (a partial multiple k·P with 1 <= k < r/2 is never ±P after a doubling).
 *
 * The including file must also define COMPOSE_FN and COMPOSE_SCRATCH_FN, and for the
 * fixed-base multiplications at the end of this file COMPOSE_FIXED_SCRATCH_FN, COMPOSE_TABLE_FN and
 * COMPOSE_FIXED_FN.
 */

#define CP_STRINGIFY_(name) #name
#define CP_STRINGIFY(name) CP_STRINGIFY_(name)

/* BN254's scalar field order r, little-endian 32-bit limbs. */
static const u32 CP_R[8] = {0xf0000001u, 0x43e1f593u, 0x79b97091u, 0x2833e848u,
                            0x8181585du, 0xb85045b6u, 0xe131a029u, 0x30644e72u};

static u32 cp_read_u32(const u8 *p) { return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24; }

/* a >= b for 8-limb values. */
static int cp_geq(const u32 *a, const u32 *b) {
  for (int i = 7; i >= 0; i--) {
    if (a[i] != b[i]) return a[i] > b[i];
  }
  return 1;
}

/* r = a - b (no borrow out: a >= b). */
static void cp_sub(u32 *r, const u32 *a, const u32 *b) {
  u64 borrow = 0;
  for (int i = 0; i < 8; i++) {
    u64 d = (u64)a[i] - b[i] - borrow;
    r[i] = (u32)d;
    borrow = (d >> 32) & 1;
  }
}

/*
 * The coefficient as stored (any 256-bit little-endian value), reduced below r and, when r - m is
 * the smaller, replaced by it: returns 1 when it was (the term's base is then negated).
 */
static int cp_scalar(u32 *k, const u8 *bytes) {
  for (int i = 0; i < 8; i++) k[i] = cp_read_u32(bytes + 4 * i);
  while (cp_geq(k, CP_R)) cp_sub(k, k, CP_R);
  /* 2k >= r means k > (r - 1) / 2 (r is odd): r - k is shorter. k < r < 2^254, so 2k fits. */
  u32 twice[8];
  u32 carry = 0;
  for (int i = 0; i < 8; i++) {
    twice[i] = (k[i] << 1) | carry;
    carry = k[i] >> 31;
  }
  if (cp_geq(twice, CP_R)) {
    cp_sub(k, CP_R, k);
    return 1;
  }
  return 0;
}

static int cp_is_zero8(const u32 *k) {
  u32 acc = 0;
  for (int i = 0; i < 8; i++) acc |= k[i];
  return acc == 0;
}

static int cp_is_one8(const u32 *k) {
  u32 acc = k[0] ^ 1u;
  for (int i = 1; i < 8; i++) acc |= k[i];
  return acc == 0;
}

/* The NAF of k (< r/2) as two bit masks, positive and negative digits; returns its length. */
static u32 cp_naf(const u32 *k, u32 *pos, u32 *neg) {
  u32 h[8], c[8];
  u64 carry = 0;
  for (int i = 0; i < 8; i++) { /* h = 3k < 2^255 */
    const u32 twice = (k[i] << 1) | (i > 0 ? k[i - 1] >> 31 : 0);
    carry += (u64)k[i] + twice;
    h[i] = (u32)carry;
    carry >>= 32;
  }
  for (int i = 0; i < 8; i++) c[i] = h[i] ^ k[i];
  u32 len = 0;
  for (int i = 0; i < 8; i++) { /* pos = (h & c) >> 1, neg = (k & c) >> 1 */
    const u32 hi_h = i < 7 ? (h[i + 1] & c[i + 1]) << 31 : 0;
    const u32 hi_k = i < 7 ? (k[i + 1] & c[i + 1]) << 31 : 0;
    pos[i] = ((h[i] & c[i]) >> 1) | hi_h;
    neg[i] = ((k[i] & c[i]) >> 1) | hi_k;
    const u32 any = pos[i] | neg[i];
    if (any) len = 32 * (u32)i + (32 - (u32)__builtin_clz(any));
  }
  return len;
}

static int cp_bit(const u32 *mask, u32 i) { return (mask[i >> 5] >> (i & 31)) & 1; }

static int cp_is_infinity(const u8 *p) { return el_is_zero(PT_X(p)) && el_is_zero(PT_Y(p)); }

/* Per-term state of a batch: its base (sign applied), running multiple, NAF, length, output. */
typedef struct {
  u8 *base;   /* max_terms points */
  u8 *run;    /* max_terms points: the running multiple */
  u32 *naf;   /* max_terms × 16 limbs: positive mask then negative mask */
  u32 *len;   /* NAF length */
  u32 *out;   /* accumulator index */
  u32 *order; /* terms sorted by decreasing length */
  u32 *list;  /* the terms of one step */
  u32 *den, *pre;
  u8 *kind, *inf;
  u32 count, max;
  /* The additions waiting for their accumulators (2·max at most): the addend and its target. */
  u8 *add_pt;
  u32 *add_to;
  u32 adds;
  /* cp_accumulate's buckets: one per target of the additions, its accumulator then its addends. */
  u8 *work;
  u32 *start, *cnt, *bucket_to, *rden, *rpre;
  u8 *rkind;
} cp_batch;

static u32 cp_align64(u32 x) { return (x + 63u) & ~63u; }

/* Bytes of scratch COMPOSE_FN needs for batches of max_terms terms. */
__attribute__((export_name(CP_STRINGIFY(COMPOSE_SCRATCH_FN))))
u32 COMPOSE_SCRATCH_FN(u32 max_terms) {
  const u32 adds = 2 * max_terms;
  return 2 * cp_align64(max_terms * PT_BYTES) + cp_align64(max_terms * 64) + 4 * cp_align64(max_terms * 4) +
         2 * cp_align64(max_terms * EL_BYTES) + 2 * cp_align64(max_terms) + cp_align64(257 * 4) +
         cp_align64(adds * PT_BYTES) + cp_align64(adds * 4) + cp_align64(2 * adds * PT_BYTES) +
         3 * cp_align64(adds * 4) + 2 * cp_align64((adds + 1) * EL_BYTES) + cp_align64(adds + 1);
}

static cp_batch cp_batch_at(u8 *scratch, u32 max_terms) {
  cp_batch b;
  u8 *at = scratch;
  b.base = at, at += cp_align64(max_terms * PT_BYTES);
  b.run = at, at += cp_align64(max_terms * PT_BYTES);
  b.naf = (u32 *)at, at += cp_align64(max_terms * 64);
  b.len = (u32 *)at, at += cp_align64(max_terms * 4);
  b.out = (u32 *)at, at += cp_align64(max_terms * 4);
  b.order = (u32 *)at, at += cp_align64(max_terms * 4);
  b.list = (u32 *)at, at += cp_align64(max_terms * 4);
  b.den = (u32 *)at, at += cp_align64(max_terms * EL_BYTES);
  b.pre = (u32 *)at, at += cp_align64(max_terms * EL_BYTES);
  b.kind = at, at += cp_align64(max_terms);
  b.inf = at, at += cp_align64(max_terms) + cp_align64(257 * 4);
  b.count = 0;
  b.max = max_terms;
  const u32 adds = 2 * max_terms;
  b.add_pt = at, at += cp_align64(adds * PT_BYTES);
  b.add_to = (u32 *)at, at += cp_align64(adds * 4);
  b.adds = 0;
  b.work = at, at += cp_align64(2 * adds * PT_BYTES);
  b.start = (u32 *)at, at += cp_align64(adds * 4);
  b.cnt = (u32 *)at, at += cp_align64(adds * 4);
  b.bucket_to = (u32 *)at, at += cp_align64(adds * 4);
  b.rden = (u32 *)at, at += cp_align64((adds + 1) * EL_BYTES);
  b.rpre = (u32 *)at, at += cp_align64((adds + 1) * EL_BYTES);
  b.rkind = at;
  return b;
}

enum { CP_ADD = 0, CP_DOUBLE = 1, CP_NONE = 2 };

/*
 * One affine step for the n terms of `list`, sharing one inversion: run_t = 2·run_t (doubling), or
 * run_t += sign·base_t (sign from the NAF digit at `bit`); a running multiple at infinity takes the
 * addend as it is.
 */
static void cp_step(cp_batch *b, u32 n, int doubling, u32 bit) {
  u32 run_prod[EL], inv[EL], t[EL];
  el_copy(run_prod, EL_ONE);
  for (u32 k = 0; k < n; k++) {
    const u32 i = b->list[k];
    u8 *p = b->run + (u64)i * PT_BYTES;
    const u8 *q = b->base + (u64)i * PT_BYTES;
    u32 *d = b->den + (u64)k * EL;
    u32 qy[EL];
    if (!doubling) {
      if (cp_bit(b->naf + (u64)i * 16 + 8, bit)) el_neg(qy, PT_Y(q));
      else el_copy(qy, PT_Y(q));
    }
    if (b->inf[i]) {
      el_copy(d, EL_ONE);
      b->kind[k] = CP_NONE;
    } else if (doubling) {
      el_add(d, PT_Y(p), PT_Y(p));
      b->kind[k] = CP_DOUBLE;
      if (el_is_zero(d)) { /* a point of order 2: none on either curve, kept safe anyway */
        el_copy(d, EL_ONE);
        b->kind[k] = CP_NONE;
      }
    } else if (!el_eq(PT_X(p), PT_X(q))) {
      el_sub(d, PT_X(q), PT_X(p));
      b->kind[k] = CP_ADD;
    } else if (el_eq(PT_Y(p), qy) && !el_is_zero(qy)) {
      el_add(d, PT_Y(p), PT_Y(p));
      b->kind[k] = CP_DOUBLE;
    } else {
      el_copy(d, EL_ONE);
      b->kind[k] = CP_NONE;
    }
    el_copy(b->pre + (u64)k * EL, run_prod);
    el_mul(run_prod, run_prod, d);
  }
  if (n == 0) return;
  el_inv(inv, run_prod);
  for (u32 k = n; k-- > 0;) {
    u32 *d = b->den + (u64)k * EL;
    el_mul(t, inv, b->pre + (u64)k * EL);
    el_mul(inv, inv, d);
    el_copy(d, t);
  }
  for (u32 k = 0; k < n; k++) {
    const u32 i = b->list[k];
    u8 *p = b->run + (u64)i * PT_BYTES;
    const u8 *q = b->base + (u64)i * PT_BYTES;
    u32 qy[EL], lambda[EL], x3[EL], y3[EL];
    if (!doubling) {
      if (cp_bit(b->naf + (u64)i * 16 + 8, bit)) el_neg(qy, PT_Y(q));
      else el_copy(qy, PT_Y(q));
    }
    if (b->kind[k] == CP_NONE) {
      if (doubling) continue;
      if (b->inf[i]) { /* infinity + q = q */
        el_copy(PT_X(p), PT_X(q));
        el_copy(PT_Y(p), qy);
        b->inf[i] = 0;
      } else { /* p + (-p) */
        b->inf[i] = 1;
      }
      continue;
    }
    if (b->kind[k] == CP_ADD) {
      el_sub(lambda, qy, PT_Y(p));
    } else {
      u32 xx[EL];
      el_sqr(xx, PT_X(p));
      el_add(lambda, xx, xx);
      el_add(lambda, lambda, xx);
    }
    el_mul(lambda, lambda, b->den + (u64)k * EL);
    el_sqr(x3, lambda);
    el_sub(x3, x3, PT_X(p));
    if (b->kind[k] == CP_ADD) el_sub(x3, x3, PT_X(q));
    else el_sub(x3, x3, PT_X(p));
    el_sub(t, PT_X(p), x3);
    el_mul(t, lambda, t);
    el_sub(y3, t, PT_Y(p));
    el_copy(PT_X(p), x3);
    el_copy(PT_Y(p), y3);
  }
}

/*
 * Adds the waiting additions into their accumulators (affine, PT_BYTES each, all zero at infinity):
 * every target's accumulator and addends make one bucket, and the buckets are summed by rounds of
 * pairwise affine additions sharing one inversion a round (reduce_buckets), about 6 products an
 * addition against 11 for a mixed Jacobian one. slot[t] (zero between calls) numbers t's bucket.
 */
static void cp_accumulate(cp_batch *b, u8 *acc, u32 *slot) {
  const u32 n = b->adds;
  if (n == 0) return;
  u32 buckets = 0;
  for (u32 i = 0; i < n; i++) {
    const u32 t = b->add_to[i];
    if (slot[t] == 0) {
      b->bucket_to[buckets] = t;
      b->cnt[buckets] = cp_is_infinity(acc + (u64)t * PT_BYTES) ? 0 : 1;
      slot[t] = ++buckets;
    }
    b->cnt[slot[t] - 1]++;
  }
  u32 at = 0;
  for (u32 k = 0; k < buckets; k++) {
    b->start[k] = at;
    const u8 *a = acc + (u64)b->bucket_to[k] * PT_BYTES;
    /* The accumulator first (when not at infinity); start[] then counts the addends placed. */
    if (!cp_is_infinity(a)) {
      u8 *w = b->work + (u64)at * PT_BYTES;
      el_copy(PT_X(w), PT_X(a));
      el_copy(PT_Y(w), PT_Y(a));
      b->bucket_to[k] |= 0x80000000u;
    }
    at += b->cnt[k];
  }
  for (u32 k = 0; k < buckets; k++) {
    const u32 full = b->bucket_to[k] >> 31;
    b->bucket_to[k] &= 0x7fffffffu;
    b->start[k] += full; /* the next free place of the bucket, for now */
  }
  for (u32 i = 0; i < n; i++) {
    const u32 k = slot[b->add_to[i]] - 1;
    const u8 *q = b->add_pt + (u64)i * PT_BYTES;
    u8 *w = b->work + (u64)(b->start[k]++) * PT_BYTES;
    el_copy(PT_X(w), PT_X(q));
    el_copy(PT_Y(w), PT_Y(q));
  }
  for (u32 k = 0; k < buckets; k++) b->start[k] -= b->cnt[k];
  reduce_buckets(b->work, b->start, b->cnt, buckets, b->rden, b->rpre, b->rkind);
  for (u32 k = 0; k < buckets; k++) {
    const u32 t = b->bucket_to[k];
    u8 *a = acc + (u64)t * PT_BYTES;
    if (b->cnt[k]) {
      const u8 *w = b->work + (u64)b->start[k] * PT_BYTES;
      el_copy(PT_X(a), PT_X(w));
      el_copy(PT_Y(a), PT_Y(w));
    } else {
      for (u32 l = 0; l < PT_BYTES; l++) a[l] = 0;
    }
    slot[t] = 0;
  }
  b->adds = 0;
}

/* Queues ±q (negated when `negate`) for accumulator t. */
static void cp_push(cp_batch *b, u32 t, const u8 *q, int negate) {
  u8 *p = b->add_pt + (u64)b->adds * PT_BYTES;
  el_copy(PT_X(p), PT_X(q));
  if (negate) el_neg(PT_Y(p), PT_Y(q));
  else el_copy(PT_Y(p), PT_Y(q));
  b->add_to[b->adds++] = t;
}

/* Multiplies every term of the batch by its scalar (in lockstep) and queues it for its accumulator. */
static void cp_flush(cp_batch *b, u8 *acc, u32 *slot) {
  const u32 n = b->count;
  if (n == 0) return;
  /* Counting sort by decreasing NAF length (at most 255). */
  u32 *starts = (u32 *)(b->inf + cp_align64(b->max));
  for (u32 l = 0; l < 257; l++) starts[l] = 0;
  for (u32 i = 0; i < n; i++) starts[256 - b->len[i]]++;
  u32 at = 0;
  for (u32 l = 0; l < 257; l++) {
    const u32 c = starts[l];
    starts[l] = at;
    at += c;
  }
  for (u32 i = 0; i < n; i++) b->order[starts[256 - b->len[i]]++] = i;
  const u32 top = b->len[b->order[0]];
  u32 started = 0; /* the terms order[0 .. started) have their running multiple */
  for (u32 bit = top; bit-- > 0;) {
    /* Double every started term. */
    for (u32 k = 0; k < started; k++) b->list[k] = b->order[k];
    cp_step(b, started, 1, 0);
    /* Terms whose top digit is this bit start with their base (a NAF's top digit is +1). */
    while (started < n && b->len[b->order[started]] == bit + 1) {
      const u32 i = b->order[started++];
      u8 *p = b->run + (u64)i * PT_BYTES;
      const u8 *q = b->base + (u64)i * PT_BYTES;
      el_copy(PT_X(p), PT_X(q));
      el_copy(PT_Y(p), PT_Y(q));
      b->inf[i] = 0;
      b->len[i] = 0; /* marks "just started": no addition at this bit */
    }
    u32 adds = 0;
    for (u32 k = 0; k < started; k++) {
      const u32 i = b->order[k];
      if (b->len[i] == 0) continue;
      const u32 *naf = b->naf + (u64)i * 16;
      if (cp_bit(naf, bit) || cp_bit(naf + 8, bit)) b->list[adds++] = i;
    }
    cp_step(b, adds, 0, bit);
    for (u32 k = 0; k < started; k++) {
      const u32 i = b->order[k];
      if (b->len[i] == 0) b->len[i] = bit + 1;
    }
  }
  if (b->adds + n > 2 * b->max) cp_accumulate(b, acc, slot);
  for (u32 i = 0; i < n; i++) {
    if (b->inf[i]) continue;
    cp_push(b, b->out[i], b->run + (u64)i * PT_BYTES, 0);
  }
  b->count = 0;
}

/* Status of COMPOSE_FN, with the failing constraint (relative to the chunk) in *where. */
#define COMPOSE_OK 0
#define COMPOSE_BAD_SIGNAL 1

/* local[s] of a signal this thread does not own. */
#define CP_NOT_MINE 0xffffffffu

/*
 * Adds the terms of `count` whole r1cs constraints (their bytes as the r1cs stores them: for A, B
 * and C in turn, u32 n then n × (u32 signal, 32-byte coefficient)) whose signal s this thread owns
 * (local[s] != CP_NOT_MINE) into acc[local[s]] (affine, PT_BYTES each, all zero at infinity: the
 * zkey's layout), as coefficient × base. base_a, base_b, base_c: the bases of each matrix's terms
 * for the chunk's constraints (point k for its k-th constraint), or 0 to leave that matrix out.
 * slot: a word per owned signal, zero (and left zero). scratch: COMPOSE_SCRATCH_FN(max_terms) bytes.
 */
__attribute__((export_name(CP_STRINGIFY(COMPOSE_FN))))
u32 COMPOSE_FN(const u8 *constraints, u32 count, u32 n_wires, const u8 *base_a, const u8 *base_b, const u8 *base_c,
               const u32 *local, u8 *acc, u32 *slot, u8 *scratch, u32 max_terms, u32 *where) {
  cp_batch b = cp_batch_at(scratch, max_terms);
  const u8 *bases[3] = {base_a, base_b, base_c};
  const u8 *p = constraints;
  for (u32 c = 0; c < count; c++) {
    for (u32 matrix = 0; matrix < 3; matrix++) {
      const u32 terms = cp_read_u32(p);
      p += 4;
      const u8 *base_of = bases[matrix];
      for (u32 t = 0; t < terms; t++, p += 36) {
        const u32 signal = cp_read_u32(p);
        if (signal >= n_wires) {
          /* The terms queued so far are still added: the job is failed whatever its accumulators hold. */
          cp_accumulate(&b, acc, slot);
          *where = c;
          return COMPOSE_BAD_SIGNAL;
        }
        if (!base_of) continue;
        const u32 target = local[signal];
        if (target == CP_NOT_MINE) continue;
        const u8 *base = base_of + (u64)c * PT_BYTES;
        if (cp_is_infinity(base)) continue;
        u32 k[8];
        const int negate = cp_scalar(k, p + 4);
        if (cp_is_zero8(k)) continue;
        if (cp_is_one8(k)) {
          if (b.adds == 2 * b.max) cp_accumulate(&b, acc, slot);
          cp_push(&b, target, base, negate);
          continue;
        }
        const u32 i = b.count++;
        u8 *q = b.base + (u64)i * PT_BYTES;
        el_copy(PT_X(q), PT_X(base));
        if (negate) el_neg(PT_Y(q), PT_Y(base));
        else el_copy(PT_Y(q), PT_Y(base));
        b.len[i] = cp_naf(k, b.naf + (u64)i * 16, b.naf + (u64)i * 16 + 8);
        b.out[i] = target;
        b.inf[i] = 1;
        if (b.count == b.max) cp_flush(&b, acc, slot);
      }
    }
  }
  cp_flush(&b, acc, slot);
  cp_accumulate(&b, acc, slot);
  return COMPOSE_OK;
}

/*
 * Fixed-base multiplication s·G for many scalars (a development ptau's points: every one a known
 * scalar times a generator), by a comb of byte windows: with T[k][d−1] = d·2^(8k)·G for k < 32 and
 * 1 ≤ d ≤ 255 (COMPOSE_TABLE_FN), s·G = Σ_k T[k][s_k] over the bytes s_k of s, so each scalar costs
 * at most 32 affine additions, every one of a batch's additions of a window sharing one inversion.
 * For s < r no addition meets equal or opposite points (a partial sum and the next window's point
 * are multiples of G by distinct integers below r whose sum stays below r); cp_step handles them
 * anyway.
 */
#define CP_TABLE_POINTS (32 * 255)

/* Bytes of scratch COMPOSE_TABLE_FN and COMPOSE_FIXED_FN need for n scalars at a time. */
__attribute__((export_name(CP_STRINGIFY(COMPOSE_FIXED_SCRATCH_FN))))
u32 COMPOSE_FIXED_SCRATCH_FN(u32 n) { return COMPOSE_SCRATCH_FN(n < 32 ? 32 : n); }

/* table (CP_TABLE_POINTS points) from the affine generator g; scratch: COMPOSE_FIXED_SCRATCH_FN(32). */
__attribute__((export_name(CP_STRINGIFY(COMPOSE_TABLE_FN))))
void COMPOSE_TABLE_FN(const u8 *g, u8 *table, u8 *scratch) {
  cp_batch b = cp_batch_at(scratch, 32);
  for (u32 i = 0; i < 16 * 32; i++) b.naf[i] = 0; /* every addend positive */
  /* The column bases 2^(8k)·G, by doublings of one term. */
  el_copy(PT_X(b.run), PT_X(g));
  el_copy(PT_Y(b.run), PT_Y(g));
  b.inf[0] = 0;
  b.list[0] = 0;
  for (u32 k = 0; k < 32; k++) {
    u8 *column = table + (u64)k * 255 * PT_BYTES;
    el_copy(PT_X(column), PT_X(b.run));
    el_copy(PT_Y(column), PT_Y(b.run));
    if (k + 1 < 32)
      for (u32 i = 0; i < 8; i++) cp_step(&b, 1, 1, 0);
  }
  /* Then every column at once: T[k][d−1] = T[k][d−2] + T[k][0]. */
  for (u32 k = 0; k < 32; k++) {
    const u8 *first = table + (u64)k * 255 * PT_BYTES;
    u8 *base = b.base + (u64)k * PT_BYTES, *run = b.run + (u64)k * PT_BYTES;
    el_copy(PT_X(base), PT_X(first));
    el_copy(PT_Y(base), PT_Y(first));
    el_copy(PT_X(run), PT_X(first));
    el_copy(PT_Y(run), PT_Y(first));
    b.inf[k] = 0;
    b.list[k] = k;
  }
  for (u32 d = 2; d <= 255; d++) {
    cp_step(&b, 32, 0, 0);
    for (u32 k = 0; k < 32; k++) {
      u8 *t = table + ((u64)k * 255 + d - 1) * PT_BYTES;
      const u8 *run = b.run + (u64)k * PT_BYTES;
      el_copy(PT_X(t), PT_X(run));
      el_copy(PT_Y(t), PT_Y(run));
    }
  }
}

/*
 * out[i] = s_i·G for n scalars (32-byte little-endian Fr elements in Montgomery form, as
 * ffjavascript keeps them, below r), affine in the zkey layout; table from COMPOSE_TABLE_FN.
 * scratch: COMPOSE_FIXED_SCRATCH_FN(n).
 */
__attribute__((export_name(CP_STRINGIFY(COMPOSE_FIXED_FN))))
void COMPOSE_FIXED_FN(const u8 *table, const u8 *scalars, u32 n, u8 *out, u8 *scratch) {
  static const u32 PLAIN_ONE_R[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  cp_batch b = cp_batch_at(scratch, n < 32 ? 32 : n);
  /* The scalars out of Montgomery form (a·R⁻¹ mod r), kept in the NAF area's positive half (cp_step
   * reads only the negative half, for signs). */
  for (u32 i = 0; i < n; i++) {
    u32 a[8], s[8];
    for (int l = 0; l < 8; l++) a[l] = cp_read_u32(scalars + (u64)i * 32 + 4 * l);
    mont_mul(s, a, PLAIN_ONE_R, CP_R, 0xefffffffu);
    u32 *keep = b.naf + (u64)i * 16;
    for (int l = 0; l < 8; l++) keep[l] = s[l];
    for (int l = 8; l < 16; l++) keep[l] = 0; /* no negative digits */
    b.inf[i] = 1;
  }
  for (u32 k = 0; k < 32; k++) {
    u32 m = 0;
    for (u32 i = 0; i < n; i++) {
      const u32 byte = (b.naf[(u64)i * 16 + k / 4] >> (8 * (k % 4))) & 0xffu;
      if (byte == 0) continue;
      const u8 *t = table + ((u64)k * 255 + byte - 1) * PT_BYTES;
      u8 *q = b.base + (u64)i * PT_BYTES;
      el_copy(PT_X(q), PT_X(t));
      el_copy(PT_Y(q), PT_Y(t));
      b.list[m++] = i;
    }
    /* The sign bits cp_step reads are the negative mask's (zero), at bit 0. */
    cp_step(&b, m, 0, 0);
  }
  for (u32 i = 0; i < n; i++) {
    u8 *o = out + (u64)i * PT_BYTES;
    if (b.inf[i]) {
      for (u32 l = 0; l < PT_BYTES; l++) o[l] = 0;
      continue;
    }
    const u8 *run = b.run + (u64)i * PT_BYTES;
    el_copy(PT_X(o), PT_X(run));
    el_copy(PT_Y(o), PT_Y(run));
  }
}
