/**
 * The address rule of viem's `isAddress` (strict), without loading viem for it: 0x and 40 hex
 * digits, all lower case, or else exactly the EIP-55 checksummed form (so an all-upper-case address
 * is refused, as viem refuses it). Files of addresses are checked before any request is made.
 */
import { keccak_256 } from '@noble/hashes/sha3';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function isEvmAddress(text: string): text is `0x${string}` {
  if (!ADDRESS.test(text)) return false;
  const digits = text.slice(2);
  const lower = digits.toLowerCase();
  if (digits === lower) return true;
  return digits === eip55(lower);
}

/** EIP-55: a hex letter is upper case where the nibble at its place in keccak256(lower-case hex text) is 8 or more. */
function eip55(lower: string): string {
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '';
  for (let i = 0; i < lower.length; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  }
  return out;
}
