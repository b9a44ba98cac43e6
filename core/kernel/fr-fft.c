/*
 * fr-fft: the inverse FFT over the scalar field F_r that the audit's check of the ptau's Lagrange
 * sections takes per level (core/audit/check-ptau-sections.ts): for n = 2^k values v,
 *   c_j = (1/n)·Σ_i v_i·ω^(-ij),
 * in place, ω the caller's n-th root of unity. Values go in and come out as 32-byte little-endian
 * standard-form scalars below r. Only the twiddles and the two constants are in Montgomery form,
 * so that the Montgomery product of a value by one of them is again in standard form: the values
 * are never converted.
 *
 * Iterative radix 2, decimation in time: the values put in bit-reversed order, then k rounds of
 * butterflies (u + t, u - t with t = ω^(-j·n/len)·v) over blocks of len = 2, 4, ..., n, every round
 * reading its twiddles from one table of the n/2 powers ω^(-j) (each round every (n/len)-th).
 */
#include "bn254-fr.h"

static void swap_values(u32 *a, u32 *b) {
  for (int i = 0; i < NL; i++) {
    const u32 t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
}

/*
 * values: n = 2^log_n scalars, transformed in place. omega_inv, n_inv: ω^-1 and 1/n in standard
 * form. twiddles: room for n/2 scalars (written).
 */
__attribute__((export_name("fr_ifft")))
void fr_ifft(u32 *values, u32 log_n, const u32 *omega_inv, const u32 *n_inv, u32 *twiddles) {
  const u32 n = 1u << log_n;
  for (u32 i = 1, j = 0; i < n; i++) {
    u32 bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) swap_values(values + (u64)i * NL, values + (u64)j * NL);
  }
  if (n >= 2) {
    u32 step[NL];
    fr_mul(step, omega_inv, R2_MOD_R); /* ω^-1 in Montgomery form */
    u32 one[NL] = {1};
    fr_mul(twiddles, one, R2_MOD_R); /* 1 in Montgomery form */
    for (u32 j = 1; j < n / 2; j++) fr_mul(twiddles + (u64)j * NL, twiddles + (u64)(j - 1) * NL, step);
  }
  for (u32 half = 1, stride = n >> 1; half < n; half <<= 1, stride >>= 1) {
    for (u32 start = 0; start < n; start += 2 * half) {
      for (u32 j = 0; j < half; j++) {
        u32 *a = values + (u64)(start + j) * NL;
        u32 *b = a + (u64)half * NL;
        u32 t[NL];
        fr_mul(t, b, twiddles + (u64)j * stride * NL);
        fr_sub(b, a, t);
        fr_add(a, a, t);
      }
    }
  }
  u32 scale[NL];
  fr_mul(scale, n_inv, R2_MOD_R);
  for (u32 i = 0; i < n; i++) fr_mul(values + (u64)i * NL, values + (u64)i * NL, scale);
}
