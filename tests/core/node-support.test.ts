import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeEndOfLifeWarning, SUPPORTED_NODE_MAJOR } from '../../core/runtime/node-support.ts';

test('a Node line past its end of life is named with the date its security fixes ended', () => {
  const warning = nodeEndOfLifeWarning('v20.20.2', new Date('2026-11-30T12:00:00Z'));
  assert.equal(warning, `Node 20 has had no security fixes since 2026-04-30; run on Node ${SUPPORTED_NODE_MAJOR}`);
  // The last day of support is still supported; the day after is not.
  assert.equal(nodeEndOfLifeWarning('20.0.0', new Date('2026-04-30T20:00:00Z')), undefined);
  assert.match(nodeEndOfLifeWarning('20.0.0', new Date('2026-05-01T00:00:01Z')) ?? '', /since 2026-04-30/);
});

test('a supported line, or one newer than the table, gets no warning; an older unknown one does', () => {
  assert.equal(nodeEndOfLifeWarning('v24.22.3', new Date('2026-11-30T12:00:00Z')), undefined);
  assert.equal(nodeEndOfLifeWarning('v22.1.0', new Date('2026-11-30T12:00:00Z')), undefined);
  assert.match(nodeEndOfLifeWarning('v22.1.0', new Date('2027-05-02T00:00:00Z')) ?? '', /since 2027-04-30/);
  assert.equal(nodeEndOfLifeWarning('v26.0.0', new Date('2026-11-30T12:00:00Z')), undefined);
  assert.match(nodeEndOfLifeWarning('v16.20.0', new Date('2026-11-30T12:00:00Z')) ?? '', /Node 16 is past/);
});
