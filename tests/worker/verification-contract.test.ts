/**
 * The verifier contract, on data that crossed a process boundary. The request check, as both
 * verifiers run it: a job queued by a coordinator of the previous version (with the since-dropped
 * initZkeyPath and ptauPath) still parses, without them; a relative path or a malformed hash does
 * not, nor candidate sums that are not base64 or longer than any a verifier opens. The refusal a
 * BullMQ worker hands back in a failed job's reason: every refusing code round-trips, the form
 * earlier workers wrote still reads, and no other failure reads as a refusal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_ERROR_CODES, refusesContribution } from '../../core/errors.ts';
import { parseVerificationRequest } from '../../core/verifier-contract/verifier-contract.ts';
import { decodeRefusal, encodeRefusal } from '../../core/verifier-contract/refusal-encoding.ts';
import { MAX_SEALED_SUMS_BYTES } from '../../core/link-check/link-combination-cache.ts';

const request = {
  contributionId: 'c1',
  circuit: 'register',
  headIndex: 1,
  headZkeyPath: '/data/chains/register/register_0001.zkey',
  candidatePath: '/data/uploads/c1',
  challenge: { stateDir: '/data/state', headFileHash: 'ab'.repeat(32), candidateFileHash: 'cd'.repeat(32) },
};

test('a job of the previous format parses, without the fields no verifier reads', () => {
  const parsed = parseVerificationRequest({
    ...request,
    initZkeyPath: '/data/chains/register/register_0000.zkey',
    ptauPath: '/data/ptau/pot.ptau',
  });
  assert.deepEqual(parsed, request);
});

test('a relative path and a malformed hash are refused, each named', () => {
  assert.throws(
    () => parseVerificationRequest({ ...request, candidatePath: 'uploads/c1' }),
    /candidatePath: must be an absolute path/,
  );
  assert.throws(
    () => parseVerificationRequest({ ...request, challenge: { ...request.challenge, headFileHash: 'XYZ' } }),
    /challenge\.headFileHash/,
  );
  assert.throws(() => parseVerificationRequest(null), /malformed verification request/);
});

test('the candidate sums a request carries are base64 of bounded length, checked before a byte is decoded', () => {
  const carrying = (candidateSums: string) => ({ ...request, challenge: { ...request.challenge, candidateSums } });
  assert.deepEqual(parseVerificationRequest(carrying('AQID+/8=')), carrying('AQID+/8='));
  assert.throws(() => parseVerificationRequest(carrying('not base64!')), /challenge\.candidateSums/);
  const tooLong = 'A'.repeat(4 * Math.ceil(MAX_SEALED_SUMS_BYTES / 3) + 4);
  assert.throws(() => parseVerificationRequest(carrying(tooLong)), /challenge\.candidateSums/);
});

test("every refusing code round-trips through a failed job's reason, whatever its message holds", () => {
  const refusing = ALL_ERROR_CODES.filter(refusesContribution);
  assert.ok(refusing.length > 10, 'the refusing codes are found');
  const message = 'the L section is "not" consistent\nwith δ — {braces} and \\ backslashes';
  for (const code of refusing) {
    assert.deepEqual(decodeRefusal(encodeRefusal({ code, message })), { code, message }, code);
  }
});

test('the reason an earlier worker wrote reads as the same refusal', () => {
  assert.deepEqual(
    decodeRefusal('{"code":"contribution.l_section_invalid","message":"the L section is not consistent"}'),
    { code: 'contribution.l_section_invalid', message: 'the L section is not consistent' },
  );
});

test('a failure that refuses nothing decodes to no refusal, so it stays retryable', () => {
  const reasons = [
    undefined,
    '',
    "ENOENT: no such file or directory, open 'candidate'",
    '{not json',
    'null',
    '"contribution.invalid"',
    '[{"code":"contribution.invalid","message":"m"}]',
    '{"code":"contribution.invalid"}',
    '{"code":"contribution.invalid","message":7}',
    '{"code":"verification.unavailable","message":"a problem of the verifier, not of the contribution"}',
    '{"code":"contribution.from_a_later_version","message":"an unknown code"}',
  ];
  for (const reason of reasons) assert.equal(decodeRefusal(reason), undefined, String(reason));
  assert.ok(!refusesContribution('verification.unavailable'), "the verifier's own code is no refusal");
});
