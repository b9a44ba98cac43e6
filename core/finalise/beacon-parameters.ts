/** Validation of the random beacon applied at finalisation (snarkjs's limits, with clear errors). */
import { CoordinatorError } from '../errors.ts';
import { BEACON_ITERATIONS_EXP } from '../transcript/transcript-format.ts';

const { min: MIN_BEACON_ITERATIONS_EXP, max: MAX_BEACON_ITERATIONS_EXP } = BEACON_ITERATIONS_EXP;

export interface BeaconParameters {
  /** Lower-case hex, an even number of digits, 1 to 255 bytes. */
  beaconHex: string;
  /** The beacon is hashed 2^iterationsExp times (SHA-256) before it becomes the key. */
  iterationsExp: number;
}

export function parseBeaconParameters(beacon: string, iterations: string | number): BeaconParameters {
  const hex = beacon.startsWith('0x') ? beacon.slice(2) : beacon;
  if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length % 2 !== 0) {
    throw new CoordinatorError(
      'finalise.bad_beacon',
      `the beacon must be hexadecimal with an even number of digits, got "${beacon}"`,
    );
  }
  if (hex.length / 2 > 255)
    throw new CoordinatorError('finalise.bad_beacon', `the beacon is ${hex.length / 2} bytes; at most 255 are allowed`);
  return { beaconHex: hex.toLowerCase(), iterationsExp: parseBeaconIterations(iterations) };
}

/** The exponent N of 2^N beacon hash iterations: an integer in snarkjs's range (`finalise.bad_iterations`). */
export function parseBeaconIterations(iterations: string | number): number {
  const exp = typeof iterations === 'number' ? iterations : Number(iterations);
  if (!Number.isInteger(exp) || exp < MIN_BEACON_ITERATIONS_EXP || exp > MAX_BEACON_ITERATIONS_EXP) {
    throw new CoordinatorError(
      'finalise.bad_iterations',
      `--iterations is the exponent N of 2^N beacon hash iterations, an ` +
        `integer from ${MIN_BEACON_ITERATIONS_EXP} to ` +
        `${MAX_BEACON_ITERATIONS_EXP}; got "${iterations}"`,
    );
  }
  return exp;
}
