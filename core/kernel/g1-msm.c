/*
 * g1-msm: the multi-exponentiation sum_i s_i * P_i over BN254 G1, the whole cost of verifying a
 * link (random combinations of L and H with 64-bit scalars) and most of the audit's check of
 * contribution 0 (256-bit scalars over the ptau, 128-bit over the key). Pippenger, as
 * pippenger-msm.h describes it, over Fq in bn254-fq-rr.h's reduced radix (9 x 29-bit limbs, lazily
 * reduced in [0, 2q)), whose product is the fastest measured in WebAssembly. Points come and go in
 * the key's layout (64 bytes, x then y, see bn254-fq.h): each is converted into the reduced radix
 * once on entry, and the sum back to the key's exact, fully reduced form on exit, so the bytes out
 * are those of the key's arithmetic. The bucket sums compare points (a pair of equal points is
 * doubled, of opposite points vanishes); rr_eq and rr_is_zero compare the representatives in
 * [0, q), so a value held as v or v + q is still seen as itself. Built with g1-compose.c, g1-scale.c,
 * g2-msm.c and g2-compose.c into one WebAssembly module; exports msm and msm_scratch_bytes.
 */
#include "bn254-fq-rr.h"

static void g1_rr_inv(u32 *r, const u32 *a) { rr_inv(r, a, RR_ONE); }

#define EL RL
#define EL_ONE RR_ONE
#define el_copy rr_copy
#define el_is_zero rr_is_zero
#define el_eq rr_eq
#define el_add rr_add
#define el_sub rr_sub
#define el_add_lazy rr_add_lazy
#define el_sub_lazy rr_sub_lazy
#define el_neg rr_neg
#define el_mul rr_mul
/* A dedicated squaring was measured slower in g1-scale.c's walk (bn254-fq-rr.h). */
#define el_sqr(r, a) rr_mul((r), (a), (a))
#define el_inv g1_rr_inv
#define EL_EXT NL
#define el_from_ext rr_from_key
#define el_to_ext rr_to_key
#define MSM_FN msm
#define MSM_SCRATCH_FN msm_scratch_bytes

#include "pippenger-msm.h"
