/**
 * Unit tests of reading the relayer's answers and the shipped schedule: every accepted shape of
 * `/quote`, both units of `feeUsdc`, exact arithmetic (no floating point), and the refusals, each
 * of which must say what came back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exactAmount, formatUnits, toBaseUnits } from '../../core/fees/exact-amount.ts';
import { readFeeSchedule } from '../../core/fees/fee-schedule.ts';
import { relayerEndpoint } from '../../core/fees/fee-targets.ts';
import { parseGasQuote } from '../../core/fees/parse-gas-quote.ts';
import { parseRelayQuote } from '../../core/fees/parse-relay-quote.ts';

function refusal(result: { ok: true } | { ok: false; reason: string }): string {
  assert.equal(result.ok, false, 'expected a refusal');
  return (result as { reason: string }).reason;
}

describe('exactAmount', () => {
  test('reads decimals exactly, where floating point would not', () => {
    // 0.1 + 0.2 style drift: 0.3 USDC must be 300000 base units, not 299999.
    for (const [value, baseUnits] of [
      ['0.3', 300000n],
      [0.3, 300000n],
      ['0.05', 50000n],
      [0.05, 50000n],
      ['1.000001', 1000001n],
      ['5e-2', 50000n],
      [5e-7, undefined],
    ] as const) {
      const read = exactAmount(value);
      assert.ok(read.ok, `${value}`);
      assert.equal(toBaseUnits(read.amount, 6), baseUnits, `${value}`);
    }
  });

  test('reads whole numbers in any notation to the same value', () => {
    for (const value of ['500000000000000', 500000000000000, '5e14', 5e14, '500000000000000.000']) {
      const read = exactAmount(value);
      assert.ok(read.ok, `${value}`);
      assert.equal(toBaseUnits(read.amount, 0), 500000000000000n, `${value}`);
    }
    const huge = exactAmount('123456789012345678901234567890');
    assert.ok(huge.ok);
    assert.equal(toBaseUnits(huge.amount, 0), 123456789012345678901234567890n);
  });

  test('refuses what is not a non-negative amount, naming it', () => {
    assert.match(refusal(exactAmount(-5)), /-5 is not a non-negative number/);
    assert.match(refusal(exactAmount('-5')), /"-5" is not a non-negative decimal number/);
    assert.match(refusal(exactAmount('0x10')), /"0x10" is not/);
    assert.match(refusal(exactAmount(' 5')), /" 5" is not/);
    assert.match(refusal(exactAmount('')), /"" is not/);
    assert.match(refusal(exactAmount(true)), /true is not a number or a numeric string/);
    assert.match(refusal(exactAmount(null)), /null is not a number/);
    assert.match(refusal(exactAmount('1e999')), /exponent beyond/);
    // JSON.parse has already rounded this one: 2^53 + 1 arrives as 2^53.
    assert.match(refusal(exactAmount(JSON.parse('9007199254740993') as number)), /beyond 2\^53.*send it as a string/);
  });

  test('formatUnits writes base units in the token unit', () => {
    assert.equal(formatUnits(50000n, 6), '0.05');
    assert.equal(formatUnits(500000000000000n, 18), '0.0005');
    assert.equal(formatUnits(3050000n, 6), '3.05');
    assert.equal(formatUnits(0n, 6), '0');
    assert.equal(formatUnits(7n, 0), '7');
  });
});

describe('parseRelayQuote accepts every shape that carries one amount', () => {
  const accepted: Array<[unknown, string | undefined]> = [
    [50000, undefined],
    ['50000', undefined],
    [5e4, undefined],
    [{ fee: 50000 }, 'fee'],
    [{ amountUsdc: '50000' }, 'amountUsdc'],
    [{ quote: '5e4' }, 'quote'],
  ];
  for (const [body, field] of accepted) {
    test(JSON.stringify(body), () => {
      const quote = parseRelayQuote(body);
      assert.ok(quote.ok, quote.ok ? '' : quote.reason);
      assert.equal(quote.baseUnits, 50000n);
      assert.equal(quote.field, field);
    });
  }
});

describe('parseRelayQuote refuses other shapes and lists what came back', () => {
  test('an object with two fields names both and shows the body', () => {
    const reason = refusal(parseRelayQuote({ fee: 50000, token: 'USDC' }));
    assert.match(reason, /an object with 2 fields \("fee", "token"\): \{"fee":50000,"token":"USDC"\}/);
  });
  test('an empty object', () => assert.match(refusal(parseRelayQuote({})), /an object with no fields: \{\}/));
  test('a field holding no number', () =>
    assert.match(refusal(parseRelayQuote({ fee: { usdc: 5 } })), /field "fee" holds \{"usdc":5\}/));
  test('a field holding a bad string', () =>
    assert.match(
      refusal(parseRelayQuote({ fee: 'five' })),
      /field "fee": "five" is not a non-negative decimal number/,
    ));
  test('an array', () => assert.match(refusal(parseRelayQuote([50000])), /the relayer answered \[50000\]/));
  test('null and booleans', () => {
    assert.match(refusal(parseRelayQuote(null)), /the relayer answered null/);
    assert.match(refusal(parseRelayQuote(true)), /the relayer answered true/);
  });
  test('a fraction is not base units', () =>
    assert.match(refusal(parseRelayQuote('0.05')), /"0\.05" is not a whole number of USDC base units/));
  test('a long answer is cut short', () => {
    const reason = refusal(parseRelayQuote({ a: 'x'.repeat(1000), b: 1 }));
    assert.ok(reason.length < 400, reason);
    assert.match(reason, /…$/);
  });
});

describe('parseGasQuote', () => {
  test('feeUsdc in decimal USDC is normalised to base units, and says so', () => {
    for (const feeUsdc of [0.05, '0.05', '0.050000', '5e-2']) {
      const quote = parseGasQuote({ feeUsdc, dropWei: '500000000000000' });
      assert.deepEqual(quote.feeUsdc, { ok: true, baseUnits: 50000n, sentAs: 'decimal USDC', sent: String(feeUsdc) });
      assert.deepEqual(quote.dropWei, { ok: true, wei: 500000000000000n });
    }
  });

  test('feeUsdc as a whole number is base units, and says so', () => {
    for (const feeUsdc of [50000, '50000']) {
      assert.deepEqual(parseGasQuote({ feeUsdc, dropWei: 500000000000000 }).feeUsdc, {
        ok: true,
        baseUnits: 50000n,
        sentAs: 'base units',
        sent: '50000',
      });
    }
  });

  test('a value written with a decimal point is decimal USDC even when whole', () => {
    assert.deepEqual(parseGasQuote({ feeUsdc: '1.0', dropWei: '1' }).feeUsdc, {
      ok: true,
      baseUnits: 1000000n,
      sentAs: 'decimal USDC',
      sent: '1.0',
    });
  });

  test('further fields are allowed', () => {
    const quote = parseGasQuote({ feeUsdc: '0.05', dropWei: '500000000000000', chainId: 999, expiresAt: 'soon' });
    assert.ok(quote.feeUsdc.ok && quote.dropWei.ok);
  });

  test('each field is refused on its own, with what came back', () => {
    const missingDrop = parseGasQuote({ feeUsdc: '0.05' });
    assert.ok(missingDrop.feeUsdc.ok);
    assert.match(refusal(missingDrop.dropWei), /no dropWei field; the relayer answered \{"feeUsdc":"0\.05"\}/);
    assert.match(refusal(parseGasQuote({ dropWei: '1' }).feeUsdc), /no feeUsdc field/);
    assert.match(refusal(parseGasQuote({ feeUsdc: '0.0000001', dropWei: '1' }).feeUsdc), /more than 6 decimals/);
    assert.match(
      refusal(parseGasQuote({ feeUsdc: '0.05', dropWei: '0.5' }).dropWei),
      /dropWei "0\.5" is not a whole number of wei/,
    );
    assert.match(
      refusal(parseGasQuote({ feeUsdc: [1], dropWei: '1' }).feeUsdc),
      /feeUsdc: \[1\] is not a number or a numeric string/,
    );
  });

  test('an answer that is not an object fails both fields', () => {
    const quote = parseGasQuote([0.05, '500000000000000']);
    assert.match(
      refusal(quote.feeUsdc),
      /expected an object with feeUsdc and dropWei; the relayer answered \[0\.05,"500000000000000"\]/,
    );
    assert.match(refusal(quote.dropWei), /expected an object/);
  });
});

test('the shipped schedule holds the values of the service document', async () => {
  const schedule = await readFeeSchedule();
  assert.equal(schedule.poolWithdrawFeeBps, 0n);
  assert.equal(schedule.relayFeeUsdcBaseUnits, 50000n);
  assert.equal(schedule.gasPurchaseFeeUsdcBaseUnits, 50000n);
  assert.equal(schedule.gasPurchaseDropWei, 500000000000000n);
});

test('relayerEndpoint appends the path once, with or without a trailing slash', () => {
  assert.equal(
    relayerEndpoint('https://api.example/relayer-mainnet', '/quote'),
    'https://api.example/relayer-mainnet/quote',
  );
  assert.equal(
    relayerEndpoint('https://api.example/relayer-mainnet/', '/gas/quote'),
    'https://api.example/relayer-mainnet/gas/quote',
  );
});
