/**
 * The ceremony service's verdicts as missed turns (issue 62): a verifier's `error` on an upload is
 * the upload's doing, a missed turn as a refusal is, so a file the verifier cannot read through
 * does not buy its sender another turn at once for ever; an error of the coordinator's own (a
 * candidate lost in a restart) is not counted against the contributor. The service runs on an
 * in-memory database with the lobby's real tables; the test answers for the verifier.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ErrorCode } from '../../core/errors.ts';
import { makeLobby } from './lobby/lobby-helpers.ts';
import { aliceHandsIn, answeredService } from '../helpers/handed-in-upload.ts';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A service whose verifier the test answers, alice and bob in line, and alice's turns given uploads and outcomes. */
async function setup(maxMissedTurns: number) {
  const dir = await mkdtemp(path.join(tmpdir(), 'missed-turn-verdicts-'));
  dirs.push(dir);
  const fixture = makeLobby({ maxMissedTurns });
  const { lobby, clock } = fixture;
  const { service, contributions, answer } = await answeredService(dir, 'missed-turn-verdicts', fixture);
  lobby.join('alice');
  lobby.join('bob');
  let uploads = 0;
  /** alice's turn (granted now if not yet), an upload in it, and `outcome` delivered for it. */
  const aliceUploads = async (
    outcome: { status: 'error'; message: string } | { status: 'invalid'; code: ErrorCode; message: string },
  ): Promise<void> => {
    lobby.tick();
    const row = await aliceHandsIn(dir, contributions, lobby, clock.now(), `candidate-${++uploads}.zkey`);
    answer({ ...outcome, contributionId: row.id });
    await service.stop(); // waits for the outcome to be applied
  };
  return { lobby, aliceUploads };
}

test('an error the verifier reached on an upload is a missed turn: at the limit its sender is out', async () => {
  const { lobby, aliceUploads } = await setup(2);
  const missed = () => lobby.queueEntries().find((e) => e.contributorId === 'alice')?.missedTurns;
  await aliceUploads({ status: 'error', message: 'the verifier could not read it' });
  assert.equal(missed(), 1, 'counted');
  assert.equal(lobby.status('alice').lastRefusal?.code, 'verification.unavailable');
  // bob's turn came in between (alice went to the back): he takes it and leaves, then alice again.
  lobby.tick();
  lobby.leave('bob');
  await aliceUploads({ status: 'error', message: 'the verifier could not read it' });
  assert.equal(lobby.status('alice').removed?.reason, 'missed_turns', 'the second: out of the queue');
  const log = lobby.queueLog.entries();
  assert.deepEqual(
    log.flatMap((e) => (e.type === 'refused' ? [[e.outcome, e.missedTurns]] : [])),
    [
      ['error', 1],
      ['error', 2],
    ],
  );
});

test('a refusal counts as well; an invalid upload followed by a good try is not the end', async () => {
  const { lobby, aliceUploads } = await setup(3);
  await aliceUploads({ status: 'invalid', code: 'contribution.invalid_proof_of_knowledge', message: 'bad proof' });
  assert.equal(lobby.queueEntries().find((e) => e.contributorId === 'alice')?.missedTurns, 1);
  assert.equal(lobby.status('alice').removed, undefined, 'below the limit: back in line');
});
