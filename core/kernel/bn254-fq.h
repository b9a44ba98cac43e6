/*
 * BN254 base field Fq in the layout of snarkjs's zkeys: 8 little-endian 32-bit limbs in Montgomery
 * form (R = 2^256), fully reduced. Shared by the kernel's C files (g1-compose.c, point-check.c,
 * g1-uncompressed.c, r1cs-scan.c, through bn254-fq2.h g2-msm.c, and for its constants and the
 * key's layout bn254-fq-rr.h), each of which includes it: the functions are static so every file
 * gets them inlined.
 */
#ifndef BN254_FQ_H
#define BN254_FQ_H
#include <stdint.h>

typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t i8;

#define NL 8
#define FB 32            /* bytes per field element */
#define PB 64            /* bytes per affine point */

static const u32 Q[NL] = {
    0xd87cfd47u, 0x3c208c16u, 0x6871ca8du, 0x97816a91u,
    0x8181585du, 0xb85045b6u, 0xe131a029u, 0x30644e72u};
static const u32 QINV = 0xe4866389u; /* -q^-1 mod 2^32 */
static const u32 QM2[NL] = {
    0xd87cfd45u, 0x3c208c16u, 0x6871ca8du, 0x97816a91u,
    0x8181585du, 0xb85045b6u, 0xe131a029u, 0x30644e72u};
static const u32 ONE[NL] = {
    0xc58f0d9du, 0xd35d438du, 0xf5c70b3du, 0x0a78eb28u,
    0x7879462cu, 0x666ea36fu, 0x9a07df2fu, 0x0e0a77c1u};


static inline void fe_copy(u32 *r, const u32 *a) {
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) r[i] = a[i];
}

static inline int fe_is_zero(const u32 *a) {
  u32 acc = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) acc |= a[i];
  return acc == 0;
}

static inline int fe_eq(const u32 *a, const u32 *b) {
  u32 acc = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) acc |= a[i] ^ b[i];
  return acc == 0;
}

/* r = a - m if a >= m (a < 2m). */
static inline void mod_reduce_once(u32 *r, const u32 *a, const u32 *m) {
  u32 t[NL];
  u64 borrow = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) {
    u64 d = (u64)a[i] - m[i] - borrow;
    t[i] = (u32)d;
    borrow = (d >> 32) & 1;
  }
  if (borrow) fe_copy(r, a);
  else fe_copy(r, t);
}

/* r = a - q if a >= q (a < 2q). */
static inline void fe_reduce_once(u32 *r, const u32 *a) { mod_reduce_once(r, a, Q); }

static inline void fe_add(u32 *r, const u32 *a, const u32 *b) {
  u32 t[NL];
  u64 c = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) {
    c += (u64)a[i] + b[i];
    t[i] = (u32)c;
    c >>= 32;
  }
  /* q < 2^254, so a + b < 2^255 never carries out. */
  fe_reduce_once(r, t);
}

static inline void fe_sub(u32 *r, const u32 *a, const u32 *b) {
  u32 t[NL];
  u64 borrow = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) {
    u64 d = (u64)a[i] - b[i] - borrow;
    t[i] = (u32)d;
    borrow = (d >> 32) & 1;
  }
  if (borrow) {
    u64 c = 0;
    _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) {
      c += (u64)t[i] + Q[i];
      t[i] = (u32)c;
      c >>= 32;
    }
  }
  fe_copy(r, t);
}

static inline void fe_neg(u32 *r, const u32 *a) {
  if (fe_is_zero(a)) { fe_copy(r, a); return; }
  u64 borrow = 0;
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) {
    u64 d = (u64)Q[i] - a[i] - borrow;
    r[i] = (u32)d;
    borrow = (d >> 32) & 1;
  }
}

/*
 * Montgomery product a·b·2^-256 mod m (minv = -m^-1 mod 2^32), CIOS without the extra carry word:
 * valid because the moduli used (q, and r in r1cs-scan.c) have a top limb below 2^31 - 1 (the
 * "no-carry" variant), which saves a word of carries per outer step. Inlined into fe_mul and its
 * scalar-field twin, so each is compiled with its modulus as constants.
 */
static inline void mont_mul(u32 *r, const u32 *a, const u32 *b, const u32 *m, u32 minv) {
  u32 t[NL] = {0};
  _Pragma("clang loop unroll(full)") for (int i = 0; i < NL; i++) {
    u64 A = (u64)t[0] + (u64)a[0] * b[i];
    t[0] = (u32)A;
    A >>= 32;
    u32 k = t[0] * minv;
    u64 C = ((u64)t[0] + (u64)k * m[0]) >> 32;
    _Pragma("clang loop unroll(full)") for (int j = 1; j < NL; j++) {
      A += (u64)t[j] + (u64)a[j] * b[i];
      t[j] = (u32)A;
      A >>= 32;
      C += (u64)t[j] + (u64)k * m[j];
      t[j - 1] = (u32)C;
      C >>= 32;
    }
    t[NL - 1] = (u32)(C + A);
  }
  mod_reduce_once(r, t, m);
}

static void fe_mul(u32 *r, const u32 *a, const u32 *b) { mont_mul(r, a, b, Q, QINV); }

static inline void fe_inv(u32 *r, const u32 *a) {
  /* Fermat: a^(q-2), square-and-multiply from the top bit. */
  u32 acc[NL];
  fe_copy(acc, ONE);
  for (int limb = NL - 1; limb >= 0; limb--) {
    for (int bit = 31; bit >= 0; bit--) {
      fe_mul(acc, acc, acc);
      if ((QM2[limb] >> bit) & 1) fe_mul(acc, acc, a);
    }
  }
  fe_copy(r, acc);
}

typedef unsigned char u8;

#define X(p) ((u32 *)(p))
#define Y(p) ((u32 *)(p) + NL)

#endif
