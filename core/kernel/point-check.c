/*
 * point-check: the check every G1 point read from a key goes through before it enters a sum (see
 * core/zkey/point-checks.ts for why): each coordinate canonically encoded (below q) and the point
 * on y² = x³ + 3, or (0,0), the point at infinity. Runs in the MSM threads on the points they are
 * about to sum, where ffjavascript's main-thread check cost several times more than the sum's
 * share of a core.
 */
#include "bn254-fq.h"

/* a < q, for a 32-byte little-endian value read as limbs. */
static int fe_canonical(const u32 *a) {
  for (int i = NL - 1; i >= 0; i--) {
    if (a[i] != Q[i]) return a[i] < Q[i];
  }
  return 0; /* a == q */
}

/*
 * Index of the first of n affine points (zkey layout, 64 bytes each) that is not canonical or not on the curve; -1 if
 * none.
 */
__attribute__((export_name("g1_first_invalid")))
int32_t g1_first_invalid(const u8 *points, u32 n) {
  u32 b[NL], lhs[NL], rhs[NL];
  fe_add(b, ONE, ONE);
  fe_add(b, b, ONE); /* 3 in Montgomery form */
  for (u32 i = 0; i < n; i++) {
    const u8 *p = points + (u64)i * PB;
    const u32 *x = X(p), *y = Y(p);
    if (!fe_canonical(x) || !fe_canonical(y)) return (int32_t)i;
    if (fe_is_zero(x) && fe_is_zero(y)) continue;
    fe_mul(lhs, y, y);
    fe_mul(rhs, x, x);
    fe_mul(rhs, rhs, x);
    fe_add(rhs, rhs, b);
    for (int k = 0; k < NL; k++) {
      if (lhs[k] != rhs[k]) return (int32_t)i;
    }
  }
  return -1;
}
