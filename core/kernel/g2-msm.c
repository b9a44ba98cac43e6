/*
 * g2-msm: the multi-exponentiation sum_i s_i * P_i over BN254 G2, on the twist
 * E'(Fq²): y² = x³ + 3/(9 + u): in the audit's check of contribution 0, the random combination of
 * the key's B2 section (128-bit scalars). Pippenger, as pippenger-msm.h describes it, over Fq² in
 * the reduced radix (bn254-fq2-rr.h), as g1-msm.c over Fq; points are 128 bytes, x.c0, x.c1, y.c0,
 * y.c1, as zkeys store them, converted in on entry and the sums back to those exact bytes on exit.
 * Built with g1-scale.c, g1-msm.c, g1-compose.c and g2-compose.c into one WebAssembly module;
 * exports g2_msm, g2_msm_windows and g2_msm_scratch_bytes.
 *
 * The twist has no point with y = 0 (its order r·(2q − r) is odd), so a bucket's doubling never
 * meets one; pippenger-msm.h still never inverts 2y = 0 (it would zero a whole round's shared
 * inversion), for inputs not yet checked to be on the curve.
 *
 * g2_msm_windows returns the sum of each window instead of their total: the audit's test that every
 * B2 point lies in the order-r subgroup (check-initial-key.ts). The twist's group has order r·h,
 * h = 2q − r = 10069 · 5864401 · 1875725156269 · (a 178-bit prime): a point with a component of
 * order dividing h slips through [r]·(Σ ρ_i P_i) = 0 whenever ρ_i kills that component, about
 * once in 10069 draws. Each window sum W_w = Σ d_{w,i} P_i is a combination with digits from 2^c
 * consecutive integers; with 2^c < 10069 (c ≤ 13) a digit of a window is fixed by its residue
 * modulo any prime dividing h, so [r]·W_w = 0 for every window holds for at most one value of a
 * 128-bit ρ_i when P_i has such a component: ≤ 2^-128, at no cost beyond the sum the check makes
 * anyway. The per-point tests known for BN254's G2 use the endomorphism ψ = (twist)⁻¹ ∘ Frobenius
 * ∘ twist: P ∈ G2 iff ψ(P) = [6x²]P, x = 4965661367192848881 the curve's seed (El Housni,
 * Guillevic, Piellard, "Co-factor clearing and subgroup membership testing on pairing-friendly
 * curves", AFRICACRYPT 2022, ePrint 2022/352), or [x+1]P + ψ([x]P) + ψ²([x]P) = ψ³([2x]P) (Dai,
 * Lin, Zhao, Zhou, "Fast subgroup membership testings for G1, G2 and GT on pairing-friendly
 * curves", ePrint 2022/348), a 63-bit scalar multiplication a point: about 1,600 Fq products,
 * against the 10 or so batch-affine additions (some 170 products) each point costs in this MSM,
 * that is about nine times the whole B2 sum. Not used for that reason.
 */
#include "bn254-fq2-rr.h"

#define EL RL2
#define EL_ONE F2RR_ONE
#define el_copy f2rr_copy
#define el_is_zero f2rr_is_zero
#define el_eq f2rr_eq
#define el_add f2rr_add
#define el_sub f2rr_sub
#define el_neg f2rr_neg
#define el_mul f2rr_mul
#define el_sqr f2rr_sqr
#define el_inv f2rr_inv
#define EL_EXT (2 * NL)
#define el_from_ext f2rr_from_key
#define el_to_ext f2rr_to_key
#define MSM_FN g2_msm
#define MSM_SCRATCH_FN g2_msm_scratch_bytes
#define MSM_WINDOWS_FN g2_msm_windows

#include "pippenger-msm.h"
