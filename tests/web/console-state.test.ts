/**
 * What the coordinator console shows (web/src/pages/console-state.ts): the phase buttons from the
 * one phase table (as the console offered them when it kept its own copy), who can be removed from
 * the lobby, whether the beacon can be announced and the ceremony finalised, with the hint that
 * says why not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PHASES } from '../../core/ceremony/ceremony-phases.ts';
import {
  beaconAnnouncementState,
  finaliseReadiness,
  phaseButtons,
  removableEntries,
} from '../../web/src/pages/console-state.ts';
import type { AdminOverview } from '../../web/src/api/api-types.ts';

test('the phase buttons are live exactly for the moves a coordinator may make', () => {
  // The console's own table before it read core/ceremony/ceremony-phases.ts.
  const offered = {
    setup: ['open', 'closed'],
    open: ['paused', 'closed'],
    paused: ['open', 'closed'],
    closed: ['open'],
    finalising: [],
    finalised: [],
  };
  for (const phase of PHASES) {
    const buttons = phaseButtons(phase);
    assert.deepEqual(
      buttons.map((b) => b.phase),
      ['open', 'paused', 'closed'],
      'three buttons, always in this order',
    );
    assert.deepEqual(
      buttons.filter((b) => b.allowed).map((b) => b.phase),
      offered[phase],
      phase,
    );
  }
});

test('once the beacon is announced, Open is never offered', () => {
  for (const phase of PHASES)
    assert.equal(phaseButtons(phase, true).find((b) => b.phase === 'open')!.allowed, false, phase);
  assert.deepEqual(
    phaseButtons('paused', true)
      .filter((b) => b.allowed)
      .map((b) => b.phase),
    ['closed'],
  );
});

test('the lobby entries a coordinator can remove: turns not yet uploaded, then every waiting entry', () => {
  const rows = removableEntries({
    activeTurns: [
      { circuit: 'register', contributorId: 'demo:alice', state: 'turn', deadline: 10 },
      { circuit: 'treeUpdate', contributorId: 'demo:bob', state: 'verifying' },
    ],
    entries: [
      { circuit: 'register', contributorId: 'demo:carol', position: 1, enqueuedAt: 1, missedTurns: 0 },
      { circuit: 'register', contributorId: 'demo:dave', position: 2, enqueuedAt: 2, eligibleAt: 99, missedTurns: 2 },
    ],
  });
  assert.deepEqual(rows, [
    { circuit: 'register', contributorId: 'demo:alice', where: 'turn', missed: '' },
    { circuit: 'register', contributorId: 'demo:carol', where: '#1', missed: '0' },
    { circuit: 'register', contributorId: 'demo:dave', where: '#2 (cooling down)', missed: '2' },
  ]);
});

const overview = (changes: Partial<AdminOverview>): AdminOverview => ({
  phase: 'closed',
  queues: {},
  activeTurns: [],
  contributionCounts: { verifying: 0, accepted: 4, refused: 0, discarded: 0, error: 0 },
  verifying: [],
  heads: [
    { circuit: 'register', headIndex: 2 },
    { circuit: 'treeUpdate', headIndex: 2 },
  ],
  minContributions: 2,
  beaconFromChain: true,
  ...changes,
});

test('finalising is offered when closed, idle and with enough contributions; the hint says what is missing', () => {
  assert.deepEqual(finaliseReadiness(overview({})), {
    canFinalise: true,
    hint: 'The ceremony is closed and no verification is running: it can be finalised.',
  });
  assert.deepEqual(finaliseReadiness(overview({ phase: 'open' })), {
    canFinalise: false,
    hint: 'Close the ceremony and let running verifications finish before finalising.',
  });
  const verifying = [{ id: 'c1', circuit: 'register', contributor: 'demo:alice', since: 1 }];
  assert.equal(finaliseReadiness(overview({ verifying })).canFinalise, false);
  assert.deepEqual(finaliseReadiness(overview({ minContributions: 3 })), {
    canFinalise: false,
    hint: 'Every circuit needs at least 3 contributions before finalising; too few for: register (2), treeUpdate (2).',
  });
  assert.match(
    finaliseReadiness(overview({ minContributions: 1, heads: [{ circuit: 'register', headIndex: 0 }] })).hint,
    /^Every circuit needs at least 1 contribution before finalising; too few for: register \(0\)\.$/,
  );
});

test('announcing the beacon is offered when closed, with no turn and an endpoint; once made it is shown', () => {
  assert.deepEqual(beaconAnnouncementState(overview({})).canAnnounce, true);
  assert.match(beaconAnnouncementState(overview({})).hint, /block not mined yet/);
  const refusals: Array<[Partial<AdminOverview>, RegExp]> = [
    [{ beaconFromChain: false }, /no BEACON_RPC_URL.*`ceremony announce-beacon`/],
    [{ phase: 'open' }, /^Close the ceremony first/],
    [{ phase: 'paused' }, /^Close the ceremony first/],
    [{ activeTurns: [{ circuit: 'register', contributorId: 'demo:alice', state: 'verifying' }] }, /turns under way/],
  ];
  for (const [changes, hint] of refusals) {
    const state = beaconAnnouncementState(overview(changes));
    assert.equal(state.canAnnounce, false, JSON.stringify(changes));
    assert.equal(state.announced, undefined);
    assert.match(state.hint, hint);
  }
  const beaconAnnouncement = {
    chainId: 1,
    blockNumber: 21_000_000,
    iterationsExp: 12,
    time: '2026-12-01T03:00:00Z',
    seq: 40,
    hash: 'ab'.repeat(64),
  };
  const announced = beaconAnnouncementState(overview({ beaconAnnouncement, beaconFromChain: false }));
  assert.equal(announced.canAnnounce, false);
  assert.match(announced.announced!, /^The beacon is the hash of block 21000000 of chain 1, hashed 2\^12 times, /);
  assert.match(announced.announced!, /, announced .* in transcript entry 40, whose hash is:$/);
  assert.equal(announced.announcedHash, 'ab'.repeat(64));
  assert.match(announced.hint, /closed for good/);
  // The finalise card then says to leave the beacon empty.
  assert.deepEqual(finaliseReadiness(overview({ beaconAnnouncement })), {
    canFinalise: true,
    hint:
      "The beacon is announced: leave its field empty and the coordinator takes block 21000000's hash, " +
      'hashed 2^12 times, once the block has its confirmations.',
  });
});
