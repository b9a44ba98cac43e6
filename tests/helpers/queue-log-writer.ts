/**
 * A lobby that never stops changing (joins, ticks, polls, leaves, verdicts) on a database file
 * and its public queue log, for the crash test to kill at any moment:
 * `node --import tsx tests/helpers/queue-log-writer.ts DB LOG`. Prints `ready` once it runs.
 */
import { randomBytes } from 'node:crypto';
import { Lobby } from '../../server/lobby/lobby.ts';
import { openDatabase } from '../../server/store/database.ts';
import { ManualClock } from '../../server/clock.ts';

const [database, file] = process.argv.slice(2) as [string, string];
/** Contribution ids are new in every run of the writer (the database keeps the old ones). */
const run = randomBytes(4).toString('hex');
const clock = new ManualClock(Date.now());
const lobby = new Lobby(
  openDatabase(database),
  {
    circuits: ['a', 'b'],
    ceremonyId: 'crash-test',
    isOpen: () => true,
    presenceMs: 60_000,
    takeTurnMs: 30_000,
    queueLog: { file },
  },
  clock,
);
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const who = `demo:c${i % 50}`;
  lobby.join(who);
  lobby.seen(`demo:c${(i * 7) % 50}`);
  clock.advance(7_000);
  for (const event of lobby.tick()) {
    if (event.type === 'turn_granted' && i % 3 === 0) {
      lobby.markSubmitted(event.contributorId, event.circuit, `${run}-${i}-${event.circuit}`);
      lobby.recordVerdict(`${run}-${i}-${event.circuit}`, {
        status: 'refused',
        code: 'contribution.invalid',
        message: 'crash test',
      });
    }
  }
  if (i % 5 === 0) lobby.leave(`demo:c${(i * 3) % 50}`);
  // Let the flush scheduled after a nested transaction run now and then.
  if (i % 4 === 0) await new Promise((resolve) => setImmediate(resolve));
}
