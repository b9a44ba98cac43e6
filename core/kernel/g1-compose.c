/*
 * g1-compose: init's sparse combinations of ptau points over BN254 G1 (sparse-compose.h:
 * g1_compose, g1_compose_scratch_bytes, and the development ptau's fixed-base products), in the
 * key's own field form (bn254-fq.h: 8 x 32-bit limbs, fully reduced), which init's bytes were
 * built and tested in. The same field instantiates pippenger-msm.h as msm_fq32 and
 * msm_fq32_scratch_bytes: G1's MSM before it moved to the reduced radix (g1-msm.c), kept as the
 * reference the kernel's tests and bench/msm-fields.ts compare msm with. Built with
 * g1-msm.c, g1-scale.c, g2-msm.c and g2-compose.c into one WebAssembly module.
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
#define MSM_FN msm_fq32
#define MSM_SCRATCH_FN msm_fq32_scratch_bytes
#define COMPOSE_FN g1_compose
#define COMPOSE_SCRATCH_FN g1_compose_scratch_bytes
#define COMPOSE_FIXED_SCRATCH_FN g1_fixed_scratch_bytes
#define COMPOSE_TABLE_FN g1_fixed_table
#define COMPOSE_FIXED_FN g1_fixed_times

#include "pippenger-msm.h"
#include "sparse-compose.h"
