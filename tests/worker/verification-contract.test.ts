/**
 * The request check of the verifier contract, as both verifiers run it on data that crossed a
 * process boundary: a job queued by a coordinator of the previous version (with the since-dropped
 * initZkeyPath and ptauPath) still parses, without them; a relative path or a malformed hash does not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVerificationRequest } from '../../core/verifier-contract/verifier-contract.ts';

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
