/*
 * g1-msm: the multi-exponentiation sum_i s_i * P_i over BN254 G1, the whole cost of verifying a
 * link (random combinations of L and H with 64-bit scalars) and most of the audit's check of
 * contribution 0 (256-bit scalars over the ptau, 128-bit over the key). Pippenger, as
 * pippenger-msm.h describes it, over Fq; points are 64 bytes, x then y (see bn254-fq.h). Built
 * with g1-scale.c and g2-msm.c into one WebAssembly module; exports msm and msm_scratch_bytes,
 * and init's sparse combinations of ptau points over G1 (sparse-compose.h: g1_compose,
 * g1_compose_scratch_bytes).
 */
#include "bn254-fq.h"

#define EL NL
#define EL_ONE ONE
#define el_copy fe_copy
#define el_is_zero fe_is_zero
#define el_eq fe_eq
#define el_add fe_add
#define el_sub fe_sub
#define el_neg fe_neg
#define el_mul fe_mul
/* Fq has no squaring cheaper than its product. */
#define el_sqr(r, a) fe_mul((r), (a), (a))
#define el_inv fe_inv
#define MSM_FN msm
#define MSM_SCRATCH_FN msm_scratch_bytes
#define COMPOSE_FN g1_compose
#define COMPOSE_SCRATCH_FN g1_compose_scratch_bytes
#define COMPOSE_FIXED_SCRATCH_FN g1_fixed_scratch_bytes
#define COMPOSE_TABLE_FN g1_fixed_table
#define COMPOSE_FIXED_FN g1_fixed_times

#include "pippenger-msm.h"
#include "sparse-compose.h"
