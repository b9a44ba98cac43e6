/**
 * How `@semaphore-protocol/proof` turns a `scope` (or `message`) string into the field value it
 * puts in `proof.scope`: ethers' `toBigInt` first (decimal, 0x/0o/0b, leading minus), and for any
 * other text the bytes32 encoding (UTF-8, right-padded with zeros, at most 31 bytes). The server
 * compares `proof.scope` with this encoding of the ceremony id, so it must match the library
 * exactly (tests check it against a real proof).
 */
import { CoordinatorError } from '../../core/errors.ts';

export function encodeSemaphoreScope(value: string): string {
  const numeric = bigintOfNumberish(value);
  if (numeric !== undefined) return numeric.toString();
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > 31) {
    throw new CoordinatorError(
      'config.invalid',
      `The ceremony id "${value}" is longer than 31 bytes and cannot be a Semaphore scope`,
    );
  }
  const padded = Buffer.concat([bytes, Buffer.alloc(32 - bytes.length)]);
  return BigInt(`0x${padded.toString('hex')}`).toString();
}

/** ethers v6 `getBigInt` on a string, or undefined where it would throw. */
function bigintOfNumberish(value: string): bigint | undefined {
  if (value === '') return undefined;
  try {
    if (value[0] === '-' && value[1] !== '-') return -BigInt(value.substring(1));
    return BigInt(value);
  } catch {
    return undefined;
  }
}
