/*
 * BN254's quadratic extension Fq² = Fq[u]/(u² + 1) over bn254-fq-rr.h's reduced radix: c0 then c1,
 * each 9 limbs of 29 bits, lazily reduced in [0, 2q), so one element is 18 limbs, 72 bytes. The
 * operations (f2rr_copy ... f2rr_inv) are fq2-over.h's over bn254-fq-rr.h: the sums that only feed
 * a product are left unreduced (below 4q, what rr_mul takes), and equality and zero are decided on
 * residues (rr_eq, rr_is_zero). Elements come from and go back to the key's layout (bn254-fq2.h:
 * 16 limbs of 32 bits) with f2rr_from_key and f2rr_to_key. Every function allows its result to
 * alias its inputs.
 */
#ifndef BN254_FQ2_RR_H
#define BN254_FQ2_RR_H
#include "bn254-fq-rr.h"

#define RL2 (2 * RL)

static const u32 F2RR_ONE[RL2] = {
    0x157ccc21u, 0x141c2758u, 0x185230d3u, 0x014c0419u, 0x0aa36fb9u,
    0x1d4240ceu, 0x11d54c07u, 0x052ac7a8u, 0x000dc836u};

static void f2rr_base_inv(u32 *r, const u32 *a) { rr_inv(r, a, RR_ONE); }

#define FQ2_(name) f2rr_##name
#define FQ2_BL RL
#define fq2_b_copy rr_copy
#define fq2_b_is_zero rr_is_zero
#define fq2_b_eq rr_eq
#define fq2_b_add rr_add
#define fq2_b_sub rr_sub
#define fq2_b_neg rr_neg
#define fq2_b_mul rr_mul
#define fq2_b_inv f2rr_base_inv
#define fq2_b_add_lazy rr_add_lazy
#define fq2_b_sub_lazy rr_sub_lazy
#include "fq2-over.h"

/* The key's layout (c0, c1: 8 x 32 bits each) to this one, and back, exact and fully reduced. */
static inline void f2rr_from_key(u32 *r, const u32 *key) {
  rr_from_key(r, key);
  rr_from_key(r + RL, key + NL);
}

static inline void f2rr_to_key(u32 *key, const u32 *a) {
  rr_to_key(key, a);
  rr_to_key(key + NL, a + RL);
}

#endif
