/*
 * g2-compose: init's sparse combinations for B2 over BN254's twist (sparse-compose.h: g2_compose,
 * g2_compose_scratch_bytes, and the development ptau's fixed-base products in G2), in the key's own
 * field form (bn254-fq2.h over bn254-fq.h), which init's bytes were built and tested in. The same
 * field instantiates pippenger-msm.h as g2_msm_fq32 and g2_msm_fq32_scratch_bytes: G2's MSM before
 * it moved to the reduced radix (g2-msm.c), kept as the reference the tests compare g2_msm with.
 * Built with g1-scale.c, g1-msm.c, g1-compose.c and g2-msm.c into one WebAssembly module.
 */
#include "bn254-fq2.h"

#define EL NL2
#define EL_ONE F2_ONE
#define el_copy f2_copy
#define el_is_zero f2_is_zero
#define el_eq f2_eq
#define el_add f2_add
#define el_sub f2_sub
#define el_neg f2_neg
#define el_mul f2_mul
#define el_sqr f2_sqr
#define el_inv f2_inv
#define MSM_FN g2_msm_fq32
#define MSM_SCRATCH_FN g2_msm_fq32_scratch_bytes
#define COMPOSE_FN g2_compose
#define COMPOSE_SCRATCH_FN g2_compose_scratch_bytes
#define COMPOSE_FIXED_SCRATCH_FN g2_fixed_scratch_bytes
#define COMPOSE_TABLE_FN g2_fixed_table
#define COMPOSE_FIXED_FN g2_fixed_times

#include "pippenger-msm.h"
#include "sparse-compose.h"
