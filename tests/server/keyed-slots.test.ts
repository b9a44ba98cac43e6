import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedSlots } from '../../server/http/keyed-slots.ts';

test('a slot is given back once however often its release is called; a slot outside the total is not counted', () => {
  const slots = new KeyedSlots();
  const first = slots.take('a');
  const second = slots.take('a');
  const holder = slots.take('b', false);
  assert.equal(slots.heldBy('a'), 2);
  assert.equal(slots.heldBy('b'), 1);
  assert.equal(slots.total, 2, 'b’s slot is outside the total');
  first();
  first();
  assert.equal(slots.heldBy('a'), 1, 'the second call gives back nothing');
  assert.equal(slots.total, 1);
  holder();
  holder();
  assert.equal(slots.heldBy('b'), 0);
  assert.equal(slots.total, 1, 'a release outside the total leaves the total alone');
  second();
  assert.equal(slots.heldBy('a'), 0);
  assert.equal(slots.total, 0);
});
