/**
 * Reads the answer of the relayer's `GET /quote`. The service document gives its meaning (the
 * USDC fee in base units that the relayer accepts) but not its field names, so every shape that
 * carries exactly one amount is accepted, and anything else is refused with what came back.
 */
import { describeJsonValue } from './describe-json-value.ts';
import { exactAmount, toInteger } from './exact-amount.ts';

export type RelayQuote =
  /** `field` names the one field of an object answer; absent for a bare number or string. */
  { ok: true; baseUnits: bigint; field?: string } | { ok: false; reason: string };

const ACCEPTED_SHAPES = 'a number, a numeric string, or an object with exactly one field holding one';

export function parseRelayQuote(body: unknown): RelayQuote {
  if (typeof body === 'number' || typeof body === 'string') return readBaseUnits(body);
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const fields = Object.keys(body);
    if (fields.length !== 1) {
      const listed =
        fields.length === 0
          ? 'no fields'
          : `${fields.length} fields (${fields.map((f) => JSON.stringify(f)).join(', ')})`;
      return {
        ok: false,
        reason:
          `expected ${ACCEPTED_SHAPES}; the relayer answered an object with ` + `${listed}: ${describeJsonValue(body)}`,
      };
    }
    const field = fields[0]!;
    const value = (body as Record<string, unknown>)[field];
    if (typeof value !== 'number' && typeof value !== 'string') {
      return {
        ok: false,
        reason: `expected ${ACCEPTED_SHAPES}; field ${JSON.stringify(field)} holds ${describeJsonValue(value)}`,
      };
    }
    const quote = readBaseUnits(value);
    return quote.ok ? { ...quote, field } : { ok: false, reason: `field ${JSON.stringify(field)}: ${quote.reason}` };
  }
  return { ok: false, reason: `expected ${ACCEPTED_SHAPES}; the relayer answered ${describeJsonValue(body)}` };
}

function readBaseUnits(value: number | string): RelayQuote {
  const read = exactAmount(value);
  if (!read.ok) return read;
  const baseUnits = toInteger(read.amount);
  if (baseUnits === undefined) {
    // The document states /quote in base units; guessing a unit for a fraction would hide a fault.
    return {
      ok: false,
      reason:
        `${describeJsonValue(value)} is not a whole number of USDC base units, ` +
        `the unit the service document states for /quote`,
    };
  }
  return { ok: true, baseUnits };
}
