/**
 * The pure parts of the deployment checks: validation of one manifest entry, the G2 generator
 * rule, and the rendering of a report (one line per verifier, a shared failure once).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BN254_G2_GENERATOR_X, deltaIsG2Generator } from '../../core/deployment/delta-is-g2-generator.ts';
import { parseDeltaEntry } from '../../core/deployment/parse-delta-entry.ts';
import { renderCheckReport } from '../../core/deployment/render-check-report.ts';
import { verifyDeployment } from '../../core/deployment/verify-deployment.ts';
import { SPEC_DELTA_MANIFEST } from './spec-delta-manifest.ts';

const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

test('parseDeltaEntry accepts two decimal field elements and names every problem otherwise', () => {
  const valid = SPEC_DELTA_MANIFEST.VerifierRegister!;
  assert.deepEqual(parseDeltaEntry({ ...valid, extra: 1 }), { ok: true, delta: valid });
  assert.deepEqual(parseDeltaEntry('123'), {
    ok: false,
    reasons: ['manifest entry is not an object with deltax1 and deltax2'],
  });
  assert.deepEqual(parseDeltaEntry([valid.deltax1, valid.deltax2]), {
    ok: false,
    reasons: ['manifest entry is not an object with deltax1 and deltax2'],
  });
  assert.deepEqual(parseDeltaEntry({}), {
    ok: false,
    reasons: ['manifest entry has no deltax1', 'manifest entry has no deltax2'],
  });
  for (const bad of ['01', '-1', '1e3', ' 1', '0x1f', '']) {
    assert.deepEqual(parseDeltaEntry({ deltax1: bad, deltax2: valid.deltax2 }), {
      ok: false,
      reasons: [`deltax1 ${JSON.stringify(bad)} is not a decimal integer string`],
    });
  }
  assert.deepEqual(parseDeltaEntry({ deltax1: valid.deltax1, deltax2: 12 }), {
    ok: false,
    reasons: ['deltax2 12 is not a decimal integer string'],
  });
  assert.deepEqual(parseDeltaEntry({ deltax1: valid.deltax1, deltax2: Q.toString() }), {
    ok: false,
    reasons: [`deltax2 ${Q} is not below the BN254 base field modulus`],
  });
});

test('deltaIsG2Generator follows the manifest convention deltax1 = c1, deltax2 = c0', () => {
  const [c0, c1] = BN254_G2_GENERATOR_X;
  assert.equal(deltaIsG2Generator({ deltax1: c1, deltax2: c0 }), true);
  assert.equal(deltaIsG2Generator({ deltax1: c0, deltax2: c1 }), false);
  for (const entry of Object.values(SPEC_DELTA_MANIFEST)) assert.equal(deltaIsG2Generator(entry), false);
});

test('renderCheckReport prints one line per verifier and a shared failure once', () => {
  const rendered = renderCheckReport({
    failure: 'RPC endpoint down',
    verifiers: [
      { verifier: 'VerifierRegister', match: false, reasons: [], warnings: [] },
      { verifier: 'VerifierTreeUpdate', match: false, reasons: ['no address in the verifiers file'], warnings: ['w'] },
    ],
  });
  assert.equal(rendered.stdout, 'VerifierRegister MISMATCH\nVerifierTreeUpdate MISMATCH\n');
  assert.equal(
    rendered.stderr,
    'error: RPC endpoint down\nVerifierTreeUpdate: no address in the verifiers file\nwarning: VerifierTreeUpdate: w\n',
  );
  assert.equal(rendered.exitCode, 1);
  const allMatch = renderCheckReport({
    verifiers: [{ verifier: 'VerifierRegister', match: true, reasons: [], warnings: [] }],
  });
  assert.deepEqual(allMatch, { stdout: 'VerifierRegister match\n', stderr: '', exitCode: 0 });
  assert.equal(renderCheckReport({ verifiers: [] }).exitCode, 1);
});

test('verifyDeployment looks up addresses by own name only and needs no endpoint when none is valid', async () => {
  const report = await verifyDeployment({
    // Nothing listens here; with no valid address the endpoint is never contacted.
    rpcUrl: 'http://127.0.0.1:9',
    manifest: { constructor: SPEC_DELTA_MANIFEST.VerifierRegister, toString: SPEC_DELTA_MANIFEST.VerifierRegister },
    verifiers: {},
  });
  assert.equal(report.failure, undefined);
  assert.deepEqual(
    report.verifiers.map((v) => [v.verifier, v.match, v.reasons]),
    [
      ['constructor', false, ['no address in the verifiers file']],
      ['toString', false, ['no address in the verifiers file']],
    ],
  );
});
