/*
 * The reduced-radix field of core/kernel/bn254-fq-rr.h, exported operation by operation for
 * reduced-radix-field.test.ts, which builds it with the kernel's flags and checks each against
 * BigInt arithmetic.
 */
#include "../../core/kernel/bn254-fq-rr.h"

#define EXPORT(name) __attribute__((export_name(name)))

EXPORT("mul") void mul(u32 *r, const u32 *a, const u32 *b) { rr_mul(r, a, b); }
EXPORT("add") void add(u32 *r, const u32 *a, const u32 *b) { rr_add(r, a, b); }
EXPORT("sub") void sub(u32 *r, const u32 *a, const u32 *b) { rr_sub(r, a, b); }
EXPORT("add_lazy") void add_lazy(u32 *r, const u32 *a, const u32 *b) { rr_add_lazy(r, a, b); }
EXPORT("sub_lazy") void sub_lazy(u32 *r, const u32 *a, const u32 *b) { rr_sub_lazy(r, a, b); }
EXPORT("neg") void neg(u32 *r, const u32 *a) { rr_neg(r, a); }
EXPORT("from_key") void from_key(u32 *r, const u32 *key) { rr_from_key(r, key); }
EXPORT("to_key") void to_key(u32 *key, const u32 *a) { rr_to_key(key, a); }
EXPORT("inv") void inv(u32 *r, const u32 *a) {
  u32 one[RL];
  rr_from_key(one, ONE);
  rr_inv(r, a, one);
}
EXPORT("one") void one(u32 *r) { rr_copy(r, RR_ONE); }
EXPORT("canon") void canon(u32 *r, const u32 *a) { rr_canon(r, a); }
EXPORT("eq") int eq(const u32 *a, const u32 *b) { return rr_eq(a, b); }
EXPORT("is_zero") int is_zero(const u32 *a) { return rr_is_zero(a); }
