/**
 * The pure parts of the whole-key deployment check, on verifiers compiled with solc-js from the
 * ceremony's final test keys: reading pushed values (never digits that straddle instructions,
 * never the metadata trailer), `checkVerifierConstants` naming the first constant of the key the
 * code lacks, the γ-set-to-δ pattern, runtime code compared up to the metadata trailer, and the
 * strict reading of a verification key.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { checkVerifierConstants } from '../../core/deployment/check-verifier-constants.ts';
import { compareRuntimeCode } from '../../core/deployment/compare-networks.ts';
import { deployedGammaIsDelta } from '../../core/deployment/deployed-gamma-is-delta.ts';
import { codeLengthWithoutMetadata, pushedValues, runtimeBytes } from '../../core/deployment/runtime-bytecode.ts';
import { parseVerificationKeyJson, type VerificationKeyJson } from '../../core/deployment/verification-key-json.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { renderSolidityVerifier } from '../../core/finalise/solidity-verifier.ts';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { compileRuntimeCodes } from '../helpers/solidity.ts';
import { verifierWithGamma } from './verifier-sources.ts';

const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
/** A CBOR map as solc appends it: {"solc": 0x000825} (7 bytes), then its length. */
const TRAILER = 'a164736f6c6343000825' + '000a';

let vkey: VerificationKeyJson;
let honest: string;
let icChanged: string;
let gammaIsDelta: string;
let optimizerOff: string;

/** `decimal` + 1 modulo q: another coordinate, still a field element. */
const nextCoordinate = (decimal: string): string => ((BigInt(decimal) + 1n) % Q).toString();

before(
  async () => {
    const { finalDir } = await finalisedCeremony();
    vkey = parseVerificationKeyJson(
      JSON.parse(await readFile(join(finalDir, 'register.vkey.json'), 'utf8')),
      'register.vkey.json',
    );
    const ic = vkey.IC.map((point, i) => (i === 3 ? [nextCoordinate(point[0]), point[1], '1'] : point));
    const sources = {
      'honest.sol': await renderSolidityVerifier(vkey, 'VerifierRegister'),
      'ic.sol': await renderSolidityVerifier({ ...vkey, IC: ic }, 'VerifierRegister'),
      'gamma.sol': await verifierWithGamma(vkey, 'VerifierRegister', vkey.vk_delta_2),
    };
    const optimized = compileRuntimeCodes(sources, { optimizer: { enabled: true, runs: 200 } });
    honest = optimized.get('honest.sol:VerifierRegister')!;
    icChanged = optimized.get('ic.sol:VerifierRegister')!;
    gammaIsDelta = optimized.get('gamma.sol:VerifierRegister')!;
    optimizerOff = compileRuntimeCodes({ 'honest.sol': sources['honest.sol'] }, {}).get('honest.sol:VerifierRegister')!;
  },
  { timeout: 300_000 },
);

describe('pushed values', () => {
  test('are read instruction by instruction: PUSH0, PUSH1 … PUSH32, never digits across two instructions', () => {
    // PUSH1 0xab, PUSH1 0xcd, PUSH0, PUSH2 0x1234, PUSH32 2^255, STOP
    const code = runtimeBytes(`0x60ab60cd5f611234${'7f80'.padEnd(66, '0')}00`);
    assert.deepEqual(
      [...pushedValues(code)].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
      [
        [0n, 1],
        [0xabn, 1],
        [0xcdn, 1],
        [0x1234n, 1],
        [1n << 255n, 1],
      ],
    );
    assert.equal(pushedValues(code).has(0xab60n), false, 'an immediate and the next opcode are not one value');
    // A PUSH cut short by the end of the code pushes nothing.
    assert.deepEqual([...pushedValues(runtimeBytes('0x60ab61ff'))], [[0xabn, 1]]);
  });

  test('leave out the metadata trailer, and only a trailer that reads as one', () => {
    const code = runtimeBytes(`0x60ab00${TRAILER}`);
    assert.equal(codeLengthWithoutMetadata(code), 3);
    assert.deepEqual([...pushedValues(code)], [[0xabn, 1]]);
    // Two last bytes that claim more than the code, or a length whose first byte is no CBOR map: all code.
    for (const hex of ['0x60ab00ffff', '0x60ab600100000003']) {
      const whole = runtimeBytes(hex);
      assert.equal(codeLengthWithoutMetadata(whole), whole.length, hex);
    }
  });

  test('come from hexadecimal bytes only', () => {
    for (const bad of ['0x6', '0xzz', '60 ab']) {
      assert.throws(
        () => runtimeBytes(bad),
        (error: unknown) => isCoordinatorError(error, 'input.invalid'),
      );
    }
  });
});

describe('checkVerifierConstants', () => {
  test('a verifier compiled from the final key carries every constant, with or without the optimizer', () => {
    assert.deepEqual(checkVerifierConstants(honest, vkey), { match: true });
    assert.deepEqual(checkVerifierConstants(optimizerOff, vkey), { match: true });
    assert.deepEqual(checkVerifierConstants(honest.toUpperCase().replace('0X', '0x'), vkey), { match: true });
  });

  test('names the first constant of the key that the code lacks', () => {
    assert.deepEqual(checkVerifierConstants(icChanged, vkey), { match: false, firstDifference: 'IC[3].x' });
    const change = (patch: Partial<VerificationKeyJson>) => checkVerifierConstants(honest, { ...vkey, ...patch });
    const [[bx0, bx1], [by0, by1], one] = vkey.vk_beta_2;
    assert.deepEqual(change({ vk_alpha_1: [vkey.vk_alpha_1[0], nextCoordinate(vkey.vk_alpha_1[1]), '1'] }), {
      match: false,
      firstDifference: 'alpha1.y',
    });
    // x1 is Fq²'s c1 ([0][1]), x2 its c0, as the template and the delta manifest name them.
    assert.deepEqual(change({ vk_beta_2: [[bx0, nextCoordinate(bx1)], [by0, by1], one] }), {
      match: false,
      firstDifference: 'beta2.x1',
    });
    assert.deepEqual(change({ vk_beta_2: [[bx0, bx1], [nextCoordinate(by0), by1], one] }), {
      match: false,
      firstDifference: 'beta2.y2',
    });
    const [gx, [gy0, gy1], gz] = vkey.vk_gamma_2;
    assert.deepEqual(change({ vk_gamma_2: [gx, [gy0, nextCoordinate(gy1)], gz] }), {
      match: false,
      firstDifference: 'gamma2.y1',
    });
    const last = vkey.IC.length - 1;
    const ic = vkey.IC.map((point, i) => (i === last ? [point[0], nextCoordinate(point[1]), '1'] : point));
    assert.deepEqual(change({ IC: ic as VerificationKeyJson['IC'] }), {
      match: false,
      firstDifference: `IC[${last}].y`,
    });
    assert.deepEqual(checkVerifierConstants('0x', vkey), { match: false, firstDifference: 'alpha1.x' });
  });

  test('does not count a constant that stands only in the metadata trailer', () => {
    const alphaX = BigInt(vkey.vk_alpha_1[0]).toString(16).padStart(64, '0');
    // The honest code with α1.x's push turned into a STOP and a JUMPDEST run, α1.x moved into a trailer.
    const withoutAlpha = honest.replace(`7f${alphaX}`, `00${'5b'.repeat(32)}`);
    assert.notEqual(withoutAlpha, honest);
    const trailer = `a1${'58'}20${alphaX}`; // {bytes(32): α1.x}: a CBOR map of one entry
    const lengthHex = (trailer.length / 2).toString(16).padStart(4, '0');
    const honestTrailerBytes = runtimeBytes(honest).length - codeLengthWithoutMetadata(runtimeBytes(honest));
    const code = `${withoutAlpha.slice(0, -2 * honestTrailerBytes)}${trailer}${lengthHex}`;
    assert.deepEqual(checkVerifierConstants(code, vkey), { match: false, firstDifference: 'alpha1.x' });
  });
});

test('a verifier whose γ was set to its δ: γ missing, δ pushed twice (and not so for the honest one)', () => {
  assert.equal(deployedGammaIsDelta(gammaIsDelta, vkey), true);
  assert.deepEqual(checkVerifierConstants(gammaIsDelta, vkey), { match: false, firstDifference: 'gamma2.x1' });
  assert.equal(deployedGammaIsDelta(honest, vkey), false);
  assert.equal(deployedGammaIsDelta(icChanged, vkey), false);
});

test("runtime code is compared but for its metadata trailer's contents, and a difference is located", () => {
  assert.deepEqual(compareRuntimeCode(honest as `0x${string}`, honest as `0x${string}`), {
    same: true,
    metadataDiffers: false,
  });
  const otherTrailer = `${honest.slice(0, -4 - 20)}${TRAILER.slice(0, -4)}${honest.slice(-4)}`;
  assert.equal(otherTrailer.length, honest.length);
  assert.notEqual(otherTrailer, honest);
  assert.deepEqual(compareRuntimeCode(honest as `0x${string}`, otherTrailer as `0x${string}`), {
    same: true,
    metadataDiffers: true,
  });
  // The same code with a longer "trailer": bytes after the compared part are never set aside.
  const bytes = runtimeBytes(honest);
  const executable = codeLengthWithoutMetadata(bytes);
  const cbor = bytes.subarray(executable, bytes.length - 2).toString('hex');
  const longerLength = (cbor.length / 2 + 32).toString(16).padStart(4, '0');
  const longer = `${honest.slice(0, 2 + 2 * executable)}${cbor}${'5b'.repeat(32)}${longerLength}`;
  assert.equal(codeLengthWithoutMetadata(runtimeBytes(longer)), executable);
  assert.deepEqual(compareRuntimeCode(honest as `0x${string}`, longer as `0x${string}`), {
    same: false,
    firstDifferingByte: executable,
    lengths: [bytes.length, bytes.length + 32],
  });
  const compared = compareRuntimeCode(honest as `0x${string}`, icChanged as `0x${string}`);
  assert.equal(compared.same, false);
  assert.ok(!compared.same && compared.firstDifferingByte > 0);
  assert.equal(compareRuntimeCode(honest as `0x${string}`, optimizerOff as `0x${string}`).same, false);
});

test('parseVerificationKeyJson takes snarkjs keys only, naming what is wrong', () => {
  const refused = (value: unknown, pattern: RegExp) =>
    assert.throws(
      () => parseVerificationKeyJson(value, 'the key'),
      (error: unknown) => isCoordinatorError(error, 'input.invalid') && pattern.test(error.message),
    );
  refused({ ...vkey, protocol: 'plonk' }, /^the key is not a Groth16 BN254 verification key: protocol /);
  refused({ ...vkey, IC: undefined }, /: IC Required$/);
  refused({ ...vkey, vk_delta_2: [['1', '0x2'], ...vkey.vk_delta_2.slice(1)] }, /: vk_delta_2\.0\.1 not a decimal/);
  refused({ ...vkey, vk_alpha_1: [Q.toString(), '1', '1'] }, /: vk_alpha_1\.0 not below the BN254 base field/);
  refused({ ...vkey, IC: vkey.IC.slice(1) }, /^the key has 6 IC points for 6 public inputs \(expected nPublic \+ 1\)$/);
  assert.deepEqual(parseVerificationKeyJson(JSON.parse(JSON.stringify(vkey)), 'the key'), vkey);
});
