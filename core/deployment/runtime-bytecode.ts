/**
 * Reading deployed runtime bytecode: its bytes, the CBOR metadata trailer solc appends (which
 * holds the hash of the compiler's metadata and its version, and is never executed), and the
 * values the code pushes on the stack. Constants of a Solidity contract compiled by solc are
 * PUSH instructions (PUSH32, or a shorter PUSHn without the leading zero bytes); reading
 * instructions rather than searching hex text means a value counts only where the code pushes
 * it, never where its digits straddle two instructions.
 */
import { CoordinatorError } from '../errors.ts';

const PUSH0 = 0x5f;
const PUSH1 = 0x60;
const PUSH32 = 0x7f;

/** The bytes of `0x…` hex (either case); throws `input.invalid` naming `what` on anything else. */
export function runtimeBytes(hex: string, what = 'runtime bytecode'): Buffer {
  const digits = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (digits.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(digits)) {
    throw new CoordinatorError('input.invalid', `${what} is not hexadecimal bytes`);
  }
  return Buffer.from(digits, 'hex');
}

/**
 * The length of the code before solc's metadata trailer: the trailer is a CBOR map whose length
 * is the code's last two bytes (big-endian). Code whose end does not read as one is returned
 * whole: nothing is ignored that was not recognised as a trailer.
 */
export function codeLengthWithoutMetadata(code: Buffer): number {
  if (code.length < 2) return code.length;
  const cborLength = code.readUInt16BE(code.length - 2);
  const start = code.length - 2 - cborLength;
  if (cborLength === 0 || start < 0) return code.length;
  const header = code[start]!;
  // A CBOR map of 1 to 23 entries (major type 5): solc writes `ipfs`/`bzzr1`, `solc`, maybe `experimental`.
  if (header < 0xa1 || header > 0xb7) return code.length;
  return start;
}

/** The code without its metadata trailer (when it has one). */
export function executableCode(code: Buffer): Buffer {
  return code.subarray(0, codeLengthWithoutMetadata(code));
}

/**
 * Every value the code pushes (PUSH0 … PUSH32) with how often, the metadata trailer left out.
 * Instructions are read from the first byte on, skipping each PUSH's immediate bytes, as the EVM
 * reads them; a PUSH cut short by the end of the code pushes nothing.
 */
export function pushedValues(code: Buffer): Map<bigint, number> {
  const end = codeLengthWithoutMetadata(code);
  const counts = new Map<bigint, number>();
  const add = (value: bigint): void => {
    counts.set(value, (counts.get(value) ?? 0) + 1);
  };
  for (let pc = 0; pc < end; pc += 1) {
    const op = code[pc]!;
    if (op === PUSH0) add(0n);
    else if (op >= PUSH1 && op <= PUSH32) {
      const size = op - PUSH1 + 1;
      if (pc + size >= end) break;
      add(BigInt(`0x${code.subarray(pc + 1, pc + 1 + size).toString('hex')}`));
      pc += size;
    }
  }
  return counts;
}
