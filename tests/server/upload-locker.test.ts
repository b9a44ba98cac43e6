/**
 * The uploads' tus lock (server/files/upload-locker.ts) keeps tus's MemoryLocker's semantics: a
 * request for a held lock asks its holder to release it and gets it once unlocked; it fails with
 * ERR_LOCK_TIMEOUT when its request stops or after the timeout; unlocking a free lock throws. It
 * waits without running meanwhile (the reason it replaced MemoryLocker, which retried every turn).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS } from '@tus/server';
import { UploadLocker } from '../../server/files/upload-locker.ts';

test('a waiter asks the holder to release, sleeps, and takes the lock once it is unlocked', async () => {
  const locker = new UploadLocker();
  const holder = locker.newLock('u1');
  let asked = 0;
  await holder.lock(new AbortController().signal, () => void asked++);
  let taken = false;
  const waiting = locker
    .newLock('u1')
    .lock(new AbortController().signal, () => {})
    .then(() => (taken = true));
  // Many turns of the event loop: the waiter asked once and stays asleep while the lock is held.
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(asked, 1, 'the holder was asked to release once, not on every turn');
  assert.equal(taken, false);
  await holder.unlock();
  await waiting;
  assert.equal(taken, true);
  // Another id is another lock.
  await locker.newLock('u2').lock(new AbortController().signal, () => {});
});

test('a waiter whose request stops, or whose timeout passes, fails with ERR_LOCK_TIMEOUT', async () => {
  const locker = new UploadLocker(200);
  await locker.newLock('u').lock(new AbortController().signal, () => {});
  const stop = new AbortController();
  const stopped = locker.newLock('u').lock(stop.signal, () => {});
  stop.abort();
  await assert.rejects(stopped, (error) => error === ERRORS.ERR_LOCK_TIMEOUT);
  const started = Date.now();
  await assert.rejects(
    locker.newLock('u').lock(new AbortController().signal, () => {}),
    (error) => error === ERRORS.ERR_LOCK_TIMEOUT,
  );
  assert.ok(Date.now() - started >= 150, 'failed before its timeout');
  await assert.rejects(locker.newLock('free').unlock(), /Releasing an unlocked lock!/);
});
