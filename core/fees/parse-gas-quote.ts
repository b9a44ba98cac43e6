/**
 * Reads the answer of the relayer's `GET /gas/quote`: an object with `feeUsdc` (the USDC price
 * of a gas purchase) and `dropWei` (the gas token sold, in wei); further fields are allowed, as
 * the service document leaves them unstated. Each of the two fields is read on its own, so one
 * bad field does not hide the other.
 *
 * `feeUsdc` may be sent in base units or in decimal USDC. The rule: a value written with a
 * decimal point (or with a fraction) is decimal USDC, a whole number is base units. The result
 * says which was seen, so an auditor can judge the rare case where the rule guesses wrong.
 */
import { describeJsonValue } from './describe-json-value.ts';
import { exactAmount, toBaseUnits, toInteger } from './exact-amount.ts';

export const USDC_DECIMALS = 6;

export type FeeUsdcUnit = 'base units' | 'decimal USDC';

export type GasQuoteFee =
  { ok: true; baseUnits: bigint; sentAs: FeeUsdcUnit; sent: string } | { ok: false; reason: string };
export type GasQuoteDrop = { ok: true; wei: bigint } | { ok: false; reason: string };

export interface GasQuote {
  feeUsdc: GasQuoteFee;
  dropWei: GasQuoteDrop;
}

export function parseGasQuote(body: unknown): GasQuote {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const reason = `expected an object with feeUsdc and dropWei; the relayer answered ${describeJsonValue(body)}`;
    return { feeUsdc: { ok: false, reason }, dropWei: { ok: false, reason } };
  }
  const fields = body as Record<string, unknown>;
  return { feeUsdc: readFeeUsdc(fields, body), dropWei: readDropWei(fields, body) };
}

function readFeeUsdc(fields: Record<string, unknown>, body: object): GasQuoteFee {
  if (!Object.hasOwn(fields, 'feeUsdc'))
    return { ok: false, reason: `no feeUsdc field; the relayer answered ${describeJsonValue(body)}` };
  const value = fields.feeUsdc;
  const read = exactAmount(value);
  if (!read.ok) return { ok: false, reason: `feeUsdc: ${read.reason}` };
  const sent = typeof value === 'string' ? value : String(value);
  const decimal = sent.includes('.') || read.amount.scale > 0;
  if (!decimal) return { ok: true, baseUnits: toInteger(read.amount)!, sentAs: 'base units', sent };
  const baseUnits = toBaseUnits(read.amount, USDC_DECIMALS);
  if (baseUnits === undefined) {
    return {
      ok: false,
      reason:
        `feeUsdc ${describeJsonValue(value)} has more than ${USDC_DECIMALS} ` + `decimals, finer than a USDC base unit`,
    };
  }
  return { ok: true, baseUnits, sentAs: 'decimal USDC', sent };
}

function readDropWei(fields: Record<string, unknown>, body: object): GasQuoteDrop {
  if (!Object.hasOwn(fields, 'dropWei'))
    return { ok: false, reason: `no dropWei field; the relayer answered ${describeJsonValue(body)}` };
  const read = exactAmount(fields.dropWei);
  if (!read.ok) return { ok: false, reason: `dropWei: ${read.reason}` };
  const wei = toInteger(read.amount);
  if (wei === undefined)
    return { ok: false, reason: `dropWei ${describeJsonValue(fields.dropWei)} is not a whole number of wei` };
  return { ok: true, wei };
}
