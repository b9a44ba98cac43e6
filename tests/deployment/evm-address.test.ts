/**
 * isEvmAddress (core/deployment/evm-address.ts) says what viem's isAddress says, on every shape of
 * text an addresses file may hold: lower case, checksummed, one letter's case flipped, all upper
 * case, too short or long, not hex, no or another prefix.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { getAddress, isAddress } from 'viem';
import { isEvmAddress } from '../../core/deployment/evm-address.ts';

function flipCaseOfOneLetter(address: string): string | undefined {
  const at = [...address].findIndex((c, i) => i > 1 && /[a-fA-F]/.test(c));
  if (at < 0) return undefined;
  const c = address[at]!;
  return address.slice(0, at) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + address.slice(at + 1);
}

test('isEvmAddress agrees with viem isAddress (strict) on 400 random addresses in every form', () => {
  const cases: string[] = [
    '',
    '0x',
    '0X' + 'a'.repeat(40),
    'a'.repeat(42),
    '0x' + 'g'.repeat(40),
    '0x' + '0'.repeat(40),
  ];
  for (let i = 0; i < 400; i++) {
    const lower = `0x${randomBytes(20).toString('hex')}`;
    const checksummed = getAddress(lower);
    cases.push(lower, checksummed, `0x${lower.slice(2).toUpperCase()}`, lower.slice(0, 41), `${lower}0`, ` ${lower}`);
    const flipped = flipCaseOfOneLetter(checksummed);
    if (flipped) cases.push(flipped);
  }
  let accepted = 0;
  for (const text of cases) {
    assert.equal(isEvmAddress(text), isAddress(text), JSON.stringify(text));
    if (isEvmAddress(text)) accepted++;
  }
  assert.ok(accepted >= 800, `both forms of every random address are accepted (${accepted})`);
});
