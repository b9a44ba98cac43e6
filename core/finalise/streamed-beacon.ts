/**
 * The coordinator's final contribution, the beacon, made in one pass as a contributor's turn is
 * (core/delta/one-pass-contribution.ts): snarkjs's `zkey beacon` on the head's small sections
 * (beaconRecord), then L and H scaled on every core and spliced with the head's other sections into
 * the final key, hashed and, given the circuit key, summed for its link check as it is written.
 * Byte for byte the key snarkjs's own `zkey beacon` writes on the same head and beacon.
 */
import { contributeInOnePass, type OnePassContribution, type OnePassRequest } from '../delta/one-pass-contribution.ts';
import { beaconRecord } from '../kernel/contribute-fast.ts';

export interface StreamedBeaconRequest extends Omit<OnePassRequest, 'makeRecord'> {
  /** The record's name. */
  name: string;
  beaconHex: string;
  iterationsExp: number;
}

export function beaconStreamed(request: StreamedBeaconRequest): Promise<OnePassContribution> {
  const { name, beaconHex, iterationsExp, ...onePass } = request;
  return contributeInOnePass({
    ...onePass,
    makeRecord: (smallKey) => beaconRecord(smallKey, name, beaconHex, iterationsExp),
  });
}
