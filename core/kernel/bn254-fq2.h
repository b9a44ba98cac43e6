/*
 * BN254's quadratic extension Fq² = Fq[u]/(u² + 1), the field of G2's coordinates, in the layout of
 * snarkjs's zkeys: c0 then c1 (a = c0 + c1·u), each an Fq element of bn254-fq.h, so one element is
 * 16 limbs, 64 bytes. The operations (f2_copy ... f2_inv) are fq2-over.h's over bn254-fq.h.
 */
#ifndef BN254_FQ2_H
#define BN254_FQ2_H
#include "bn254-fq.h"

#define NL2 (2 * NL)

static const u32 F2_ONE[NL2] = {
    0xc58f0d9du, 0xd35d438du, 0xf5c70b3du, 0x0a78eb28u,
    0x7879462cu, 0x666ea36fu, 0x9a07df2fu, 0x0e0a77c1u};

#define FQ2_(name) f2_##name
#define FQ2_BL NL
#define fq2_b_copy fe_copy
#define fq2_b_is_zero fe_is_zero
#define fq2_b_eq fe_eq
#define fq2_b_add fe_add
#define fq2_b_sub fe_sub
#define fq2_b_neg fe_neg
#define fq2_b_mul fe_mul
#define fq2_b_inv fe_inv
#define fq2_b_add_lazy fe_add
#define fq2_b_sub_lazy fe_sub
#include "fq2-over.h"

#endif
