/**
 * The Groth16 verification key as snarkjs exports it (`zkey export verificationkey`, the
 * published `CIRCUIT.vkey.json`): coordinates as decimal strings, G1 points as [x, y, "1"], G2
 * points as [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]. Parsed once, strictly, before any of its
 * constants is compared with anything: a missing or malformed coordinate is an input error, never
 * a constant that "does not occur".
 *
 * The constants are named as the Solidity verifier snarkjs renders names them, with its order of
 * Fq² components: `x1` is c1 and `x2` is c0 (the delta manifest's `deltax1 = vk_delta_2[0][1]`).
 */
import { z } from 'zod';
import { BN254_Q } from '../crypto/bn254-moduli.ts';
import { CoordinatorError } from '../errors.ts';

const coordinate = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/, 'not a decimal integer string')
  .refine((value) => BigInt(value) < BN254_Q, 'not below the BN254 base field modulus');
// The point at infinity is exported as ["0", "1", "0"]; only x and y reach the verifier.
const g1Affine = z.tuple([coordinate, coordinate, z.enum(['1', '0'])]);
const fq2 = z.tuple([coordinate, coordinate]);
const g2Affine = z.tuple([fq2, fq2, z.tuple([z.literal('1'), z.literal('0')])]);

const verificationKeySchema = z.object({
  protocol: z.literal('groth16'),
  curve: z.literal('bn128'),
  nPublic: z.number().int().nonnegative(),
  vk_alpha_1: g1Affine,
  vk_beta_2: g2Affine,
  vk_gamma_2: g2Affine,
  vk_delta_2: g2Affine,
  IC: z.array(g1Affine).min(1),
});

/** snarkjs's Groth16 verification key JSON (other fields it may carry, e.g. vk_alphabeta_12, are kept as they are). */
export type VerificationKeyJson = z.infer<typeof verificationKeySchema> & Record<string, unknown>;

/** One constant of a verification key as the Solidity verifier carries it. */
export interface VerificationKeyConstant {
  /** e.g. `alpha1.x`, `gamma2.x1`, `IC[3].y` */
  label: string;
  value: bigint;
}

/**
 * Checks `value` is a Groth16 BN254 verification key in snarkjs's JSON shape with IC holding
 * nPublic + 1 points; `what` names it in the error (`input.invalid`).
 */
export function parseVerificationKeyJson(value: unknown, what: string): VerificationKeyJson {
  const parsed = verificationKeySchema.passthrough().safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CoordinatorError(
      'input.invalid',
      `${what} is not a Groth16 BN254 verification key: ${issue.path.join('.') || 'the key'} ${issue.message}`,
    );
  }
  if (parsed.data.IC.length !== parsed.data.nPublic + 1) {
    throw new CoordinatorError(
      'input.invalid',
      `${what} has ${parsed.data.IC.length} IC points for ${parsed.data.nPublic} public inputs (expected nPublic + 1)`,
    );
  }
  return parsed.data as VerificationKeyJson;
}

function g2Constants(name: string, point: VerificationKeyJson['vk_beta_2']): VerificationKeyConstant[] {
  const [[x0, x1], [y0, y1]] = point;
  return [
    { label: `${name}.x1`, value: BigInt(x1) },
    { label: `${name}.x2`, value: BigInt(x0) },
    { label: `${name}.y1`, value: BigInt(y1) },
    { label: `${name}.y2`, value: BigInt(y0) },
  ];
}

/** Every constant the verifier carries, in the order the snarkjs template declares them. */
export function verificationKeyConstants(vkey: VerificationKeyJson): VerificationKeyConstant[] {
  return [
    { label: 'alpha1.x', value: BigInt(vkey.vk_alpha_1[0]) },
    { label: 'alpha1.y', value: BigInt(vkey.vk_alpha_1[1]) },
    ...g2Constants('beta2', vkey.vk_beta_2),
    ...g2Constants('gamma2', vkey.vk_gamma_2),
    ...g2Constants('delta2', vkey.vk_delta_2),
    ...vkey.IC.flatMap(([x, y], i) => [
      { label: `IC[${i}].x`, value: BigInt(x) },
      { label: `IC[${i}].y`, value: BigInt(y) },
    ]),
  ];
}
