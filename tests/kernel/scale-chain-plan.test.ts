/**
 * planScaleChain keeps its last plan (snarkjs applies one scalar in calls of 2^16 points), and
 * forgets it when the kernel's batchApplyKey is taken out again: a contribution's scalar is its
 * secret's inverse, which the module must not hold once the scaling is done.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import test from 'node:test';
import { installFastApplyKey, type PatchableCurve } from '../../core/kernel/fast-apply-key.ts';
import { BN254_R, planScaleChain } from '../../core/kernel/g1-scale-chain.ts';

test('the last plan is kept for the same scalar, and dropped when the kernel is uninstalled', () => {
  const k = BigInt(`0x${randomBytes(32).toString('hex')}`) % BN254_R;
  const first = planScaleChain(k);
  assert.ok(first, 'a random scalar has a chain');
  assert.equal(planScaleChain(k), first, 'the same scalar again: the plan kept');
  const curve = { G1: { batchApplyKey: async () => new Uint8Array() }, Fr: {} } as unknown as PatchableCurve;
  const restore = installFastApplyKey(curve, { workers: 1, scale: async (points) => points });
  restore();
  const again = planScaleChain(k);
  assert.notEqual(again, first, 'planned anew: the kept plan was dropped');
  assert.deepEqual(again, first, 'to the same chain');
});
