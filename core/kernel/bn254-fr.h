/*
 * BN254's scalar field F_r on bn254-fq.h's 32-bit Montgomery product (its no-carry variant holds
 * for r too: r's top limb is below 2^31 - 1). Values are 8 little-endian 32-bit limbs below r. The
 * products are Montgomery products (a·b·2^-256): a value times a constant in Montgomery form stays
 * in standard form, which is how r1cs-scan.c and fr-fft.c keep their data in the files' form.
 */
#ifndef BN254_FR_H
#define BN254_FR_H
#include "bn254-fq.h"

static const u32 R[NL] = {
    0xf0000001u, 0x43e1f593u, 0x79b97091u, 0x2833e848u,
    0x8181585du, 0xb85045b6u, 0xe131a029u, 0x30644e72u};
static const u32 RINV = 0xefffffffu; /* -r^-1 mod 2^32 */
/* 2^512 mod r: a Montgomery product with it puts a value into Montgomery form. */
static const u32 R2_MOD_R[NL] = {
    0xae216da7u, 0x1bb8e645u, 0xe35c59e3u, 0x53fe3ab1u,
    0x53bb8085u, 0x8c49833du, 0x7f4e44a5u, 0x0216d0b1u};

static inline void fr_mul(u32 *out, const u32 *a, const u32 *b) { mont_mul(out, a, b, R, RINV); }

static inline void fr_add(u32 *out, const u32 *a, const u32 *b) {
  u32 t[NL];
  u64 c = 0;
  for (int i = 0; i < NL; i++) {
    c += (u64)a[i] + b[i];
    t[i] = (u32)c;
    c >>= 32;
  }
  mod_reduce_once(out, t, R); /* r < 2^254: no carry out */
}

/* a - b, plus r when negative. */
static inline void fr_sub(u32 *out, const u32 *a, const u32 *b) {
  u32 t[NL];
  u64 borrow = 0;
  for (int i = 0; i < NL; i++) {
    const u64 d = (u64)a[i] - b[i] - borrow;
    t[i] = (u32)d;
    borrow = (d >> 32) & 1;
  }
  const u32 mask = 0u - (u32)borrow;
  u64 c = 0;
  for (int i = 0; i < NL; i++) {
    c += (u64)t[i] + (R[i] & mask);
    out[i] = (u32)c;
    c >>= 32;
  }
}

#endif
