/*
 * r1cs-scan: the audit's pass over an r1cs for its check of contribution 0
 * (core/audit/check-initial-key.ts; at the end of the file, init's two passes, which count the
 * terms and write the coefficients section): for each constraint c, with ρ_s the random scalar of signal s,
 *   u_c = Σ ρ_s·a_cs,  v_c = Σ ρ_s·b_cs,  w_c = Σ ρ_s·c_cs,  and  w_c + σ1·u_c + σ2·v_c,
 * over the scalar field F_r, written as 32-byte little-endian standard-form scalars (what the MSM
 * over the ptau's Lagrange points takes); and each A and B term compared with the key's
 * coefficients section (section 4), which snarkjs writes as [matrix, constraint, signal, a·R² mod r]
 * (its Montgomery form of a·R: zkey new premultiplies by R so that provers skip a conversion).
 * In BigInt arithmetic this pass cost the main thread seconds at 2^18.
 *
 * Layouts. r1cs constraint: for A, B and C in turn, u32 n then n × (u32 signal, 32-byte LE
 * coefficient, standard form). Section 4 entry: u32 matrix, u32 constraint, u32 signal, 32-byte LE
 * value a·R² mod r. All integers little-endian.
 */
#include "bn254-fr.h"

static const u32 R3_MOD_R[NL] = {
    0xb4bf0040u, 0x5e94d8e1u, 0x1cfbb6b8u, 0x2a489cbeu,
    0xa19fcfedu, 0x893cc664u, 0x7fcc657cu, 0x0cf8594bu};

static int below_r(const u32 *a) {
  for (int i = NL - 1; i >= 0; i--) {
    if (a[i] != R[i]) return a[i] < R[i];
  }
  return 0;
}

static u32 read_u32(const u8 *p) { return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24; }

/* A coefficient as read (any 256-bit value), reduced below r. */
static void fr_from_bytes(u32 *out, const u8 *bytes) {
  for (int i = 0; i < NL; i++) out[i] = read_u32(bytes + 4 * i);
  while (!below_r(out)) {
    u64 borrow = 0;
    for (int i = 0; i < NL; i++) {
      u64 d = (u64)out[i] - R[i] - borrow;
      out[i] = (u32)d;
      borrow = (d >> 32) & 1;
    }
  }
}

static void write_u32(u8 *out, u32 v) {
  out[0] = (u8)v;
  out[1] = (u8)(v >> 8);
  out[2] = (u8)(v >> 16);
  out[3] = (u8)(v >> 24);
}

static void write_scalar(u8 *out, const u32 *a) {
  for (int i = 0; i < NL; i++) write_u32(out + 4 * i, a[i]);
}

/* rho_mont[s] = ρ_s·R mod r for n scalars of `width` bytes (little-endian, below r). In place is not allowed. */
__attribute__((export_name("fr_to_montgomery")))
void fr_to_montgomery(const u8 *scalars, u32 n, u32 width, u8 *out) {
  for (u32 s = 0; s < n; s++) {
    u8 bytes[FB] = {0};
    for (u32 b = 0; b < width && b < FB; b++) bytes[b] = scalars[(u64)s * width + b];
    u32 v[NL], m[NL];
    fr_from_bytes(v, bytes);
    fr_mul(m, v, R2_MOD_R);
    write_scalar(out + (u64)s * FB, m);
  }
}

/* Status of r1cs_scan, with the failing constraint's index in *where. */
#define SCAN_OK 0
#define SCAN_BAD_SIGNAL 1        /* a term names a signal >= n_wires */
#define SCAN_COEFFICIENT 2       /* a section-4 entry differs from what the r1cs makes */

/*
 * Scans n whole constraints starting at `constraints` (the first being constraint number `first`)
 * and writes their four scalars at out + 32·k (k = 0..n-1) of each output. rho_mont: n_wires
 * Montgomery scalars; sigma_mont: σ1, σ2 in Montgomery form. entries: the section-4 entries of the
 * same constraints in order (A's then B's for each), or 0 not to compare.
 */
__attribute__((export_name("r1cs_scan")))
u32 r1cs_scan(const u8 *constraints, u32 n, u32 first, const u8 *rho_mont, u32 n_wires, const u8 *sigma_mont,
              const u8 *entries, u8 *out_u, u8 *out_v, u8 *out_w, u8 *out_combined, u32 *where) {
  const u8 *p = constraints;
  const u8 *e = entries;
  const u32 *sigma1 = (const u32 *)sigma_mont, *sigma2 = (const u32 *)(sigma_mont + FB);
  for (u32 k = 0; k < n; k++) {
    const u32 c = first + k;
    u32 sums[3][NL];
    for (u32 matrix = 0; matrix < 3; matrix++) {
      for (int i = 0; i < NL; i++) sums[matrix][i] = 0;
      const u32 terms = read_u32(p);
      p += 4;
      for (u32 t = 0; t < terms; t++, p += 4 + FB) {
        const u32 signal = read_u32(p);
        if (signal >= n_wires) {
          *where = c;
          return SCAN_BAD_SIGNAL;
        }
        u32 coef[NL], product[NL];
        fr_from_bytes(coef, p + 4);
        /* (ρ·R)·coef·R⁻¹ = ρ·coef, in standard form. */
        fr_mul(product, (const u32 *)(rho_mont + (u64)signal * FB), coef);
        fr_add(sums[matrix], sums[matrix], product);
        if (e && matrix < 2) {
          u32 mont[NL];
          fr_mul(mont, coef, R3_MOD_R); /* a·R³·R⁻¹ = a·R² */
          u8 expected[12 + FB];
          write_u32(expected, matrix);
          write_u32(expected + 4, c);
          write_u32(expected + 8, signal);
          write_scalar(expected + 12, mont);
          for (u32 b = 0; b < 12 + FB; b++) {
            if (e[b] != expected[b]) {
              *where = c;
              return SCAN_COEFFICIENT;
            }
          }
          e += 12 + FB;
        }
      }
    }
    u32 combined[NL], t1[NL];
    fr_mul(t1, sigma1, sums[0]); /* σ1·u, standard form */
    fr_add(combined, sums[2], t1);
    fr_mul(t1, sigma2, sums[1]);
    fr_add(combined, combined, t1);
    write_scalar(out_u + (u64)k * FB, sums[0]);
    write_scalar(out_v + (u64)k * FB, sums[1]);
    write_scalar(out_w + (u64)k * FB, sums[2]);
    write_scalar(out_combined + (u64)k * FB, combined);
  }
  return SCAN_OK;
}

/*
 * init's passes over the r1cs (core/ceremony/initial-key-writer.ts), over n whole constraints
 * numbered from `first`. With counts: adds the number of terms of each matrix (A, B, C) to
 * counts[3·(s >> shift) + matrix], per block of 2^shift signals (init splits the signals between its
 * threads by these counts, and sizes the coefficients section from them). With out: writes the
 * coefficients section's entries (section 4, as `zkey new` writes them): for each constraint its A
 * terms then its B terms, each [matrix, constraint, signal, a·R² mod r], and their count at
 * *written. A term naming a signal >= n_wires returns SCAN_BAD_SIGNAL with the failing constraint
 * (relative to the batch) in *where.
 */
__attribute__((export_name("r1cs_init_pass")))
u32 r1cs_init_pass(const u8 *constraints, u32 n, u32 first, u32 n_wires, u32 shift, u32 *counts, u8 *out,
                   u32 *written, u32 *where) {
  const u8 *p = constraints;
  u8 *o = out;
  for (u32 k = 0; k < n; k++) {
    for (u32 matrix = 0; matrix < 3; matrix++) {
      const u32 terms = read_u32(p);
      p += 4;
      for (u32 t = 0; t < terms; t++, p += 4 + FB) {
        const u32 signal = read_u32(p);
        if (signal >= n_wires) {
          *where = k;
          return SCAN_BAD_SIGNAL;
        }
        if (counts) counts[3 * (signal >> shift) + matrix]++;
        if (!out || matrix == 2) continue;
        u32 coef[NL], mont[NL];
        fr_from_bytes(coef, p + 4);
        fr_mul(mont, coef, R3_MOD_R); /* a·R³·R⁻¹ = a·R² */
        write_u32(o, matrix);
        write_u32(o + 4, first + k);
        write_u32(o + 8, signal);
        write_scalar(o + 12, mont);
        o += 12 + FB;
      }
    }
  }
  if (out) *written = (u32)((o - out) / (12 + FB));
  return SCAN_OK;
}
