/**
 * An upload's owner as its tus metadata keeps it (server/files/upload-owner.ts), on its own: what a
 * creation stores, what a refusal found later is handed in under, and the owner of an upload that
 * an earlier version created, which kept only the id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ownerMetadata, ownerOf } from '../../server/files/upload-owner.ts';
import type { Principal } from '../../server/auth/principal.ts';

test('the owner stored at creation is the one read back, never granted a coordinator’s rights', () => {
  const alice: Principal = { id: 'github:42', kind: 'github', displayName: 'alice', coordinator: true };
  const stored = { format: 'zkey-delta-v2', ...ownerMetadata(alice) };
  assert.deepEqual(ownerOf(stored), { ...alice, coordinator: false });
});

test('an upload of an earlier version (its id alone) is handed in under the kind its id names', () => {
  assert.deepEqual(ownerOf({ contributor: 'semaphore:123' }), {
    id: 'semaphore:123',
    kind: 'semaphore',
    displayName: 'semaphore:123',
    coordinator: false,
  });
  assert.equal(ownerOf({ contributor: 'coordinator:token' })?.kind, 'coordinator-token');
  assert.equal(ownerOf({ format: 'zkey' }), undefined, 'no owner stored');
  assert.equal(ownerOf(undefined), undefined);
});
