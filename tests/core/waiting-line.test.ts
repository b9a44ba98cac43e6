/**
 * The audit replay's index of a circuit's waiting entries (core/audit/waiting-line.ts) answers
 * exactly as the lobby's pure rules (core/queue-log/turn-order.ts firstInLine, offeredBefore,
 * mayTakeOnStandby) over the same queue, on random queues and random steps: joins, removals, entries
 * back in their place, away and back, cooldowns, entries passed on and the turn's end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WaitingLine, type Slotted } from '../../core/audit/waiting-line.ts';
import { firstInLine, mayTakeOnStandby, offeredBefore } from '../../core/queue-log/turn-order.ts';

interface Entry extends Slotted {
  name: string;
}

/** A small deterministic generator (mulberry32), so a failing seed can be run again. */
function random(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** One random step on the line and on `queue` (the plain array in FIFO order) alike. */
function randomStep(rand: (n: number) => number, line: WaitingLine<Entry>, queue: Entry[], out: Entry[]): void {
  const pick = (): Entry | undefined => queue[rand(queue.length)];
  const kind = rand(10);
  const entry = pick();
  if (kind <= 2 || !entry) {
    queue.push(line.join({ name: `c${rand(1e9)}`, away: rand(4) === 0, eligibleAt: rand(20), passedOn: false }));
  } else if (kind === 3) {
    line.remove(entry);
    queue.splice(queue.indexOf(entry), 1);
    out.push(entry);
  } else if (kind === 4 && out.length > 0) {
    const back = out.splice(rand(out.length), 1)[0]!;
    line.change(back, { away: true, eligibleAt: rand(20), passedOn: true });
    line.insert(back);
    const place = queue.findIndex((w) => w.slot > back.slot);
    queue.splice(place < 0 ? queue.length : place, 0, back);
  } else if (kind === 5) line.change(entry, { away: !entry.away });
  else if (kind === 6) line.change(entry, { eligibleAt: rand(20) });
  else if (kind === 7) line.change(entry, { passedOn: true });
  else if (kind === 8 && rand(3) === 0) line.endTurn();
  else line.change(entry, { passedOn: rand(2) === 0, away: rand(3) === 0 });
}

function compare(line: WaitingLine<Entry>, queue: Entry[], now: number, where: string): void {
  assert.equal(line.length, queue.length, `${where}: length`);
  assert.equal(line.firstInLine(now), firstInLine(queue, now), `${where}: firstInLine at ${now}`);
  for (const candidate of queue) {
    for (const depth of [0, 1, 2, 3, 5, 8, queue.length + 1]) {
      const is = (e: Entry): boolean => e === candidate;
      const expected = offeredBefore(queue, is, depth, now);
      const got = line.offeredBefore(candidate, depth, now);
      assert.deepEqual(got, expected, `${where}: offeredBefore(${candidate.name}, ${depth}) at ${now}`);
      assert.equal(got !== undefined, mayTakeOnStandby(queue, is, depth, now));
    }
  }
}

test('the index answers as firstInLine and offeredBefore on random queues, step after step', () => {
  for (let seed = 1; seed <= 60; seed++) {
    const rand = random(seed);
    const line = new WaitingLine<Entry>();
    const queue: Entry[] = [];
    const out: Entry[] = [];
    for (let step = 0; step < 150; step++) {
      randomStep(rand, line, queue, out);
      compare(line, queue, rand(25), `seed ${seed} step ${step}`);
    }
  }
});

test('an entry not in the line is offered nothing; the line grows past its first capacity', () => {
  const line = new WaitingLine<Entry>();
  const entries = Array.from({ length: 1000 }, (_, i) =>
    line.join({ name: `c${i}`, away: i % 3 === 0, eligibleAt: i % 7, passedOn: false }),
  );
  line.remove(entries[500]!);
  assert.equal(line.offeredBefore(entries[500]!, 1000, 10), undefined);
  assert.equal(line.length, 999);
  assert.equal(line.firstInLine(1), entries[1]);
  assert.equal(line.firstInLine(0), entries[7], 'c1 cools down until 1; c7, present, does not');
  assert.equal(line.firstInLine(-1), undefined);
});
