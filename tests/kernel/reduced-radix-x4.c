/*
 * The four-lane field of core/kernel/bn254-fq-rr-x4.h, exported operation by operation beside the
 * scalar field of bn254-fq-rr.h it mirrors, for reduced-radix-x4.test.ts (built with the SIMD
 * module's flags), which checks each lane against the scalar operation and BigInt.
 */
#include "../../core/kernel/bn254-fq-rr-x4.h"

#define EXPORT(name) __attribute__((export_name(name)))

EXPORT("init") void init(void) { rr4_init(); }
EXPORT("x4_mul") void x4_mul(V *r, const V *a, const V *b) { rr4_mul(r, a, b); }
EXPORT("x4_sqr") void x4_sqr(V *r, const V *a) { rr4_sqr(r, a); }
EXPORT("x4_add") void x4_add(V *r, const V *a, const V *b) { rr4_add(r, a, b); }
EXPORT("x4_sub") void x4_sub(V *r, const V *a, const V *b) { rr4_sub(r, a, b); }
EXPORT("x4_add_lazy") void x4_add_lazy(V *r, const V *a, const V *b) { rr4_add_lazy(r, a, b); }
EXPORT("x4_sub_lazy") void x4_sub_lazy(V *r, const V *a, const V *b) { rr4_sub_lazy(r, a, b); }
EXPORT("x4_neg") void x4_neg(V *r, const V *a) { rr4_neg(r, a); }
EXPORT("x4_sub2") void x4_sub2(V *r, const V *a, const V *b, const V *c) { rr4_sub2(r, a, b, c); }
EXPORT("x4_triple_lazy") void x4_triple_lazy(V *r, const V *a) { rr4_triple_lazy(r, a); }
/* Four points' coordinates in the key's layout (8 words each) to the working form and back: the walk's entry, exit. */
EXPORT("x4_from_keys") void x4_from_keys(V *r, const u32 *keys) {
  V v[RL];
  for (int lane = 0; lane < 4; lane++) {
    u32 limbs[RL];
    rr_unpack_key(limbs, keys + NL * lane);
    rr4_set_lane(v, limbs, lane);
  }
  rr4_mul(r, v, FROM_KEY_SPLAT);
}
EXPORT("x4_to_keys") void x4_to_keys(u32 *keys, const V *a) {
  V v[RL];
  rr4_mul(v, a, TO_KEY_SPLAT);
  for (int lane = 0; lane < 4; lane++) {
    u32 limbs[RL];
    rr4_get_lane(limbs, v, lane);
    rr_pack_key(keys + NL * lane, limbs);
  }
}
EXPORT("mul") void mul(u32 *r, const u32 *a, const u32 *b) { rr_mul(r, a, b); }
EXPORT("add") void add(u32 *r, const u32 *a, const u32 *b) { rr_add(r, a, b); }
EXPORT("sub") void sub(u32 *r, const u32 *a, const u32 *b) { rr_sub(r, a, b); }
EXPORT("add_lazy") void add_lazy(u32 *r, const u32 *a, const u32 *b) { rr_add_lazy(r, a, b); }
EXPORT("sub_lazy") void sub_lazy(u32 *r, const u32 *a, const u32 *b) { rr_sub_lazy(r, a, b); }
EXPORT("neg") void neg(u32 *r, const u32 *a) { rr_neg(r, a); }
