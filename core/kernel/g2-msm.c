/*
 * g2-msm: the multi-exponentiation sum_i s_i * P_i over BN254 G2, on the twist
 * E'(Fq²): y² = x³ + 3/(9 + u): in the audit's check of contribution 0, the random combination of
 * the key's B2 section (128-bit scalars). Pippenger, as pippenger-msm.h describes it, over Fq²
 * (bn254-fq2.h); points are 128 bytes, x.c0, x.c1, y.c0, y.c1, as zkeys store them. Built with
 * g1-scale.c and g1-msm.c into one WebAssembly module; exports g2_msm and g2_msm_scratch_bytes.
 *
 * The twist has no point with y = 0 (its order r·(2q − r) is odd), so a bucket's doubling never
 * meets one; pippenger-msm.h still never inverts 2y = 0 (it would zero a whole round's shared
 * inversion), for inputs not yet checked to be on the curve.
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
#define MSM_FN g2_msm
#define MSM_SCRATCH_FN g2_msm_scratch_bytes

#include "pippenger-msm.h"
