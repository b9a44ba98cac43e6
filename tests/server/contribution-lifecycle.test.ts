/**
 * The contribution life cycle: its transition table move by move (every legal move, every other
 * move refused with lifecycle.illegal_transition), the turn outcome derived from it, and the
 * ceremony service recording a verdict in both stores (contribution row and lobby turn) in one
 * transaction: a throw injected in the second store leaves the first unchanged too.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isCoordinatorError } from '../../core/errors.ts';
import type { VerificationOutcome } from '../../core/verifier-contract/verifier-contract.ts';
import {
  LIFECYCLE_EVENTS,
  LIFECYCLE_STATES,
  settleVerdict,
  transition,
  turnOutcome,
  type LifecycleEvent,
  type LifecycleState,
} from '../../server/contributions/contribution-lifecycle.ts';
import { makeLobby } from './lobby/lobby-helpers.ts';
import { aliceHandsIn, answeredService } from '../helpers/handed-in-upload.ts';

/** The legal moves, written out independently of the module's table. */
const LEGAL: Array<[LifecycleState, LifecycleEvent, LifecycleState]> = [
  ['turn', 'uploaded', 'verifying'],
  ['turn', 'deadline_passed', 'missed'],
  ['turn', 'removed', 'discarded'],
  ['turn', 'left', 'discarded'],
  ['turn', 'not_taken', 'discarded'],
  ['verifying', 'committed', 'accepted'],
  ['verifying', 'refused', 'refused'],
  ['verifying', 'not_committed', 'discarded'],
  ['verifying', 'unverifiable', 'error'],
];

describe('the transition table', () => {
  for (const [from, event, to] of LEGAL) {
    test(`${from} --${event}--> ${to}`, () => assert.equal(transition(from, event), to));
  }

  test('every other move is refused with lifecycle.illegal_transition', () => {
    let refused = 0;
    for (const from of LIFECYCLE_STATES) {
      for (const event of LIFECYCLE_EVENTS) {
        if (LEGAL.some(([f, e]) => f === from && e === event)) continue;
        assert.throws(
          () => transition(from, event),
          (error: unknown) => isCoordinatorError(error, 'lifecycle.illegal_transition') && error.message.includes(from),
          `${from} --${event}-->`,
        );
        refused++;
      }
    }
    assert.equal(refused, LIFECYCLE_STATES.length * LIFECYCLE_EVENTS.length - LEGAL.length);
  });

  test('a decided contribution takes no second verdict', () => {
    const accepted = settleVerdict('verifying', {
      event: 'committed',
      chainIndex: 3,
      contributionHash: 'ab',
      transcriptHash: 'cd',
    });
    assert.deepEqual(accepted, { status: 'accepted', chainIndex: 3, contributionHash: 'ab', transcriptHash: 'cd' });
    assert.throws(
      () => settleVerdict(accepted.status, { event: 'refused', code: 'zkey.malformed', message: 'x' }),
      (error: unknown) => isCoordinatorError(error, 'lifecycle.illegal_transition'),
    );
    assert.deepEqual(
      settleVerdict('verifying', { event: 'unverifiable', code: 'verification.unavailable', message: 'm' }),
      { status: 'error', code: 'verification.unavailable', message: 'm' },
    );
  });

  test('the lobby outcome of a turn is derived from its final state', () => {
    assert.deepEqual((['accepted', 'refused', 'discarded', 'error', 'missed'] as const).map(turnOutcome), [
      'accepted',
      'refused',
      'discarded',
      'refused',
      'missed',
    ]);
    assert.throws(
      () => turnOutcome('verifying'),
      (error: unknown) => isCoordinatorError(error, 'lifecycle.illegal_transition'),
    );
  });
});

describe('a verdict is recorded in both stores in one transaction', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /** A service on an in-memory database, a verifying contribution of alice, and a dispatcher the test answers for. */
  async function setup() {
    const dir = await mkdtemp(path.join(tmpdir(), 'lifecycle-'));
    dirs.push(dir);
    const fixture = makeLobby();
    const { lobby, clock } = fixture;
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const decisions: unknown[] = [];
    const { service, contributions, answer } = await answeredService(dir, 'lifecycle-test', fixture, {
      log: { info: () => {}, warn: (message, fields) => void warnings.push({ message, fields }) },
      observer: { lobbyEvent: () => {}, contributionDecided: (decision) => void decisions.push(decision) },
    });
    lobby.join('alice');
    lobby.join('bob');
    lobby.tick();
    const row = await aliceHandsIn(dir, contributions, lobby, clock.now());
    /** Delivers an outcome and resolves once the service has applied it (or warned that it could not). */
    const deliver = async (outcome: VerificationOutcome): Promise<void> => {
      answer(outcome);
      await service.stop(); // waits for the outcomes being applied
    };
    return { service, lobby, contributions, row, deliver, warnings, decisions };
  }

  test('a refusal lands in the contribution row and the lobby together', async () => {
    const { lobby, contributions, row, deliver, decisions } = await setup();
    await deliver({
      contributionId: row.id,
      status: 'invalid',
      code: 'contribution.invalid_proof_of_knowledge',
      message: 'bad proof',
    });
    assert.equal(contributions.get(row.id)!.status, 'refused');
    assert.equal(contributions.get(row.id)!.code, 'contribution.invalid_proof_of_knowledge');
    assert.equal(lobby.status('alice').lastRefusal?.code, 'contribution.invalid_proof_of_knowledge');
    assert.deepEqual(
      lobby.activeTurns().filter((turn) => turn.contributorId === 'alice'),
      [],
    );
    assert.equal(decisions.length, 1);
    await deliver({
      contributionId: row.id,
      status: 'invalid',
      code: 'contribution.invalid_proof_of_knowledge',
      message: 'bad proof',
    });
    assert.equal(decisions.length, 1, 'a repeated outcome records nothing');
  });

  test(
    'a throw in the lobby after the row was updated leaves neither ' + 'changed, and the verdict can land later',
    async () => {
      const { lobby, contributions, row, deliver, warnings, decisions } = await setup();
      const recordVerdict = lobby.recordVerdict.bind(lobby);
      lobby.recordVerdict = () => {
        // The row is already updated inside the transaction when the lobby fails.
        assert.equal(contributions.get(row.id)!.status, 'error');
        throw new Error('injected: the lobby fails mid-verdict');
      };
      await deliver({ contributionId: row.id, status: 'error', message: 'the verifier died' });
      assert.ok(
        warnings.some(
          (w) => w.message === 'could not apply a verification outcome' && String(w.fields?.error).includes('injected'),
        ),
        JSON.stringify(warnings),
      );
      assert.equal(contributions.get(row.id)!.status, 'verifying', 'the row update was rolled back');
      assert.equal(contributions.get(row.id)!.code, null);
      assert.deepEqual(
        lobby.activeTurns().find((turn) => turn.contributorId === 'alice'),
        { circuit: 'register', contributorId: 'alice', state: 'verifying' },
      );
      assert.equal(lobby.status('alice').lastRefusal, undefined);
      assert.equal(decisions.length, 0, 'nothing was observed as decided');

      lobby.recordVerdict = recordVerdict;
      await deliver({ contributionId: row.id, status: 'error', message: 'the verifier died' });
      assert.equal(contributions.get(row.id)!.status, 'error');
      assert.equal(lobby.status('alice').lastRefusal?.code, 'verification.unavailable');
      assert.deepEqual(
        lobby.activeTurns().filter((turn) => turn.contributorId === 'alice'),
        [],
      );
      assert.equal(decisions.length, 1);
    },
  );
});
