/**
 * One head preparation, as every verifier runs it (the embedded verifier process and the BullMQ
 * worker processes): the head's combination under the circuit key, computed and written to the
 * coordinator's link cache unless an entry that authenticates is there already. The request's
 * shape and why it exists: core/verifier-contract/verifier-contract.ts (HeadPreparationRequest).
 */
import { performance } from 'node:perf_hooks';
import { circuitChallengeKey, linkChallengeSeed } from '../core/link-check/link-challenge.ts';
import { readCachedCombination, writeCachedCombination } from '../core/link-check/link-combination-cache.ts';
import { linkCombinationOf } from '../core/link-check/verify-link-from-head.ts';
import type { HeadPreparationRequest, HeadPreparationResult } from '../core/verifier-contract/verifier-contract.ts';

export async function prepareHead(request: HeadPreparationRequest): Promise<HeadPreparationResult> {
  const started = performance.now();
  const { circuit, headFileHash, stateDir } = request;
  const key = circuitChallengeKey(await linkChallengeSeed(stateDir), circuit);
  const done = (result: HeadPreparationResult['result']): HeadPreparationResult => ({
    circuit,
    headFileHash,
    result,
    ms: Math.round(performance.now() - started),
  });
  if (await readCachedCombination(stateDir, key, headFileHash)) return done('cached');
  // Labelled by role: a failure's message may reach the coordinator's log, never its paths.
  const combination = await linkCombinationOf(request.headZkeyPath, key, 'the chain head');
  await writeCachedCombination(stateDir, key, headFileHash, combination);
  return done('computed');
}
