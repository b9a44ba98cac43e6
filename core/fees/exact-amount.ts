/**
 * Exact amounts from what a relayer sends: a JSON number or a numeric string, read without ever
 * going through floating point arithmetic, so `0.05` USDC is exactly 50000 base units and a wei
 * amount is compared digit for digit.
 */
import { describeJsonValue } from './describe-json-value.ts';

/** `digits / 10^scale`, with no trailing zero in `digits` when `scale > 0`. */
export interface ExactAmount {
  digits: bigint;
  scale: number;
}

export type ExactAmountResult = { ok: true; amount: ExactAmount } | { ok: false; reason: string };

/** Plain decimal, optionally with an exponent (`5e14`, `0.05`, `50000`); no sign, no hex. */
const NUMERIC = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Beyond this, an exponent is a typo or an attack on `10n ** n`, never a fee. */
const MAX_EXPONENT = 100;

/**
 * Reads a JSON number or a numeric string. A JSON number that is an integer beyond 2^53 is
 * refused: JSON.parse has already rounded it, so it cannot be compared exactly.
 */
export function exactAmount(value: unknown): ExactAmountResult {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return { ok: false, reason: `${value} is not a non-negative number` };
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      return {
        ok: false,
        reason:
          `${value} is a JSON number beyond 2^53, which JSON rounds; it cannot ` +
          `be compared exactly (send it as a string)`,
      };
    }
    // String() gives the shortest text that reads back as this number, e.g. 0.05 → "0.05".
    return parseNumericText(String(value));
  }
  if (typeof value === 'string') {
    if (value.length > 100) return { ok: false, reason: `a string of ${value.length} characters is not an amount` };
    return parseNumericText(value);
  }
  return { ok: false, reason: `${describeJsonValue(value)} is not a number or a numeric string` };
}

function parseNumericText(text: string): ExactAmountResult {
  const match = NUMERIC.exec(text);
  if (!match) return { ok: false, reason: `${JSON.stringify(text)} is not a non-negative decimal number` };
  const [, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > MAX_EXPONENT)
    return { ok: false, reason: `${JSON.stringify(text)} has an exponent beyond ±${MAX_EXPONENT}` };
  let digits = BigInt(`${whole}${fraction}`);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale -= 1;
  }
  return { ok: true, amount: { digits, scale } };
}

/** The amount in units of `10^-decimals`, or undefined when it has more decimals than that. */
export function toBaseUnits(amount: ExactAmount, decimals: number): bigint | undefined {
  if (amount.scale > decimals) return undefined;
  return amount.digits * 10n ** BigInt(decimals - amount.scale);
}

/** The whole number, or undefined when the amount has a fraction. */
export function toInteger(amount: ExactAmount): bigint | undefined {
  return toBaseUnits(amount, 0);
}

/** `50000n, 6` → `"0.05"`: base units written in the token's own unit, for readers. */
export function formatUnits(baseUnits: bigint, decimals: number): string {
  const text = baseUnits.toString().padStart(decimals + 1, '0');
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}
