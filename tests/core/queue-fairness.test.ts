/**
 * The audit's fairness check (core/audit/check-queue-fairness.ts) on a queue log the real lobby
 * wrote, with presence, lapses, verdicts and removals in it: it passes as written, and each
 * hand-edited version (the hash chain recomputed, as a coordinator rewriting its log would) fails
 * with its own code naming the entries: a turn granted out of order, an acceptance with no turn,
 * an acceptance naming another link of the transcript, a link of the transcript with no acceptance,
 * a turn passed on before its time, an entry marked away too soon. Hand-written logs of a turn
 * taken on standby (issue 62) pass when they follow the rule, and fail each way they do not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkQueueFairness, queueLogFinding } from '../../core/audit/check-queue-fairness.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { checkQueueLog, queueLogGenesisHash, type QueueLogEntry } from '../../core/queue-log/queue-log-entry.ts';
import { chainEntryHash } from '../../core/transcript/hash-chain.ts';
import { Transcript, type TranscriptEntry } from '../../core/transcript/transcript.ts';
import { makeLobby } from '../server/lobby/lobby-helpers.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { joined } from '../helpers/joined-regex.ts';
import { iso, registerStep } from '../helpers/queue-log-steps.ts';

const CIRCUITS = ['register', 'transact2', 'transact21'];
const config = { circuits: CIRCUITS.map((name) => ({ name })) };
const hex = (byte: string) => byte.repeat(128);
/** The section hashes a key's transcript entry carries (their values play no part in the queue's rules). */
const SECTIONS = Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((id) => [String(id), hex('e')]));

/** A transcript at `file` holding every circuit's contribution 0 (hashes that play no part in the queue's rules). */
async function initialisedTranscript(file: string): Promise<Transcript> {
  const transcript = await Transcript.load(file, 'lobby-test');
  await transcript.append(
    CIRCUITS.map((circuit) => ({
      type: 'init' as const,
      circuit,
      index: 0 as const,
      circuitHash: hex('c'),
      fileHash: hex('f'),
      sectionHashes: SECTIONS,
    })),
  );
  return transcript;
}

/** A ceremony's worth of lobby steps: presence, a turn passed on, a refusal, acceptances, a removal. */
async function scenario(): Promise<{ log: QueueLogEntry[]; transcript: TranscriptEntry[]; ceremonyId: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'queue-fairness-'));
  try {
    const fixture = makeLobby({ presenceMs: 60_000, takeTurnMs: 30_000 });
    const { lobby, clock } = fixture;
    const transcript = await initialisedTranscript(path.join(dir, 'transcript.jsonl'));
    let index = 0;
    const accept = async (who: string, contributionId: string) => {
      lobby.markSubmitted(who, 'register', contributionId);
      const [entry] = await transcript.append([
        {
          type: 'contribution',
          circuit: 'register',
          index: ++index,
          contributor: who,
          contributionHash: hex(String(index)),
          fileHash: hex('e'),
          sectionHashes: SECTIONS,
        },
      ]);
      lobby.recordVerdict(contributionId, {
        status: 'accepted',
        chainIndex: index,
        contributionHash: hex(String(index)),
        transcriptHash: entry!.hash,
      });
    };
    for (const who of ['alice', 'bob', 'carol', 'dave']) lobby.join(who);
    lobby.tick(); // alice
    lobby.takeTurn('alice', 'register');
    clock.advance(40_000);
    lobby.seen('bob');
    lobby.seen('carol');
    await accept('alice', 'a1');
    lobby.tick(); // bob
    clock.advance(30_001); // bob never takes it: passed on to carol (dave is away by now)
    lobby.seen('carol');
    lobby.tick();
    lobby.takeTurn('carol', 'register');
    lobby.markSubmitted('carol', 'register', 'c1');
    lobby.recordVerdict('c1', { status: 'refused', code: 'contribution.invalid_proof_of_knowledge', message: 'no' });
    lobby.seen('bob');
    lobby.tick(); // bob, back in his place ahead of carol
    lobby.takeTurn('bob', 'register');
    await accept('bob', 'b1');
    lobby.seen('carol');
    lobby.tick(); // carol again: dave, not seen since he joined, is passed over (and logged away)
    lobby.takeTurn('carol', 'register');
    lobby.removeEntry('dave');
    lobby.leave('carol');
    const log = checkQueueLog('lobby-test', lobby.queueLog.entries(), 'of the lobby');
    assert.deepEqual(
      log.flatMap((e) => (e.type === 'granted' && e.circuit === 'register' ? [e.contributor] : [])),
      ['alice', 'bob', 'carol', 'bob', 'carol'],
      'the scenario went as planned',
    );
    return { log, transcript: [...transcript.entries], ceremonyId: 'lobby-test' };
  } finally {
    await cleanUp(dir);
  }
}

/** The log with `edit` applied and its hash chain recomputed, as a coordinator rewriting it would. */
function rewritten(
  log: readonly QueueLogEntry[],
  edit: (entries: Array<Record<string, unknown>>) => void,
): QueueLogEntry[] {
  const entries = log.map((e) => ({ ...e }) as Record<string, unknown>);
  edit(entries);
  let prevHash = queueLogGenesisHash('lobby-test');
  entries.forEach((entry, seq) => {
    entry.seq = seq;
    entry.prevHash = prevHash;
    entry.hash = chainEntryHash(entry);
    prevHash = entry.hash as string;
  });
  return checkQueueLog('lobby-test', entries, 'rewritten');
}

function assertFails(run: () => unknown, code: string, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(isCoordinatorError(error), String(error));
    assert.equal(error.code, code, error.message);
    assert.match(error.message, message);
    return true;
  });
}

const { log, transcript } = await scenario();
const indexOf = (predicate: (e: Record<string, unknown>) => boolean) =>
  log.findIndex((e) => predicate(e as unknown as Record<string, unknown>));

test('the log the lobby wrote passes: every turn went to the first in line by the rules', () => {
  const summary = checkQueueFairness(config, log, transcript);
  assert.match(summary, /\d+ turns granted, each to the first in line/);
  assert.match(summary, /2 acceptances matching the transcript/);
});

test('a turn granted out of order in a hand-edited log fails, naming the entries', () => {
  // The first grant goes to bob instead of alice, who joined before him and was there.
  const grant = indexOf((e) => e.type === 'granted');
  const edited = rewritten(log, (entries) => {
    entries[grant]!.contributor = 'bob';
    entries[grant]!.name = 'bob';
  });
  assertFails(
    () => checkQueueFairness(config, edited, transcript),
    'audit.turn_out_of_order',
    new RegExp(
      `entry ${grant} \\(granted register, bob\\) gives the turn to bob, but alice \\(in line since entry \\d+`,
    ),
  );
});

test('a turn granted to an entry the log holds away fails', () => {
  // Without bob's `back`, the log still has him away (his untaken turn put him back so) when he is granted.
  const back = indexOf((e) => e.type === 'back' && e.contributor === 'bob');
  assert.ok(back > 0, 'bob came back');
  const edited = rewritten(log, (entries) => entries.splice(back, 1));
  assertFails(
    () => checkQueueFairness(config, edited, transcript),
    'audit.turn_out_of_order',
    /gives the turn to bob, but dave \(in line since entry \d+, present and eligible\) was first/,
  );
});

test('an acceptance with no turn in the log fails', () => {
  const grant = indexOf((e) => e.type === 'granted');
  const taken = indexOf((e) => e.type === 'taken');
  const edited = rewritten(log, (entries) => entries.splice(grant, taken - grant + 1));
  assertFails(() => checkQueueFairness(config, edited, transcript), 'audit.queue_rule_broken', /no turn of alice/);
});

test('a log that disagrees with the transcript fails', () => {
  const acceptance = indexOf((e) => e.type === 'accepted');
  const elsewhere = rewritten(log, (entries) => (entries[acceptance]!.transcriptHash = hex('9')));
  assertFails(
    () => checkQueueFairness(config, elsewhere, transcript),
    'audit.queue_log_mismatch',
    new RegExp(`entry ${acceptance} \\(accepted register, alice\\) names no contribution of the transcript`),
  );
  const lastAcceptance = log.map((e) => e.type).lastIndexOf('accepted');
  const dropped = rewritten(log, (entries) => {
    entries[lastAcceptance]!.type = 'refused';
    entries[lastAcceptance]!.code = 'contribution.invalid';
    entries[lastAcceptance]!.outcome = 'refused';
    entries[lastAcceptance]!.missedTurns = 2; // a refusal is a missed turn, bob's second (his first: not taken)
    delete entries[lastAcceptance]!.index;
    delete entries[lastAcceptance]!.transcriptHash;
  });
  assertFails(
    () => checkQueueFairness(config, dropped, transcript),
    'audit.queue_log_mismatch',
    /the transcript's register #2 \(entry \d+, by bob\) has no acceptance in the queue log/,
  );
});

test('a turn passed on before its time, and an entry marked away too soon, break the rules', () => {
  const lapse = indexOf((e) => e.type === 'lapsed');
  const grant = indexOf((e) => e.type === 'granted' && e.contributor === 'bob');
  const early = rewritten(log, (entries) => {
    entries[lapse]!.time = entries[grant]!.time; // as soon as it was granted
  });
  assertFails(() => checkQueueFairness(config, early, transcript), 'audit.queue_rule_broken', /before its time/);
  const away = indexOf((e) => e.type === 'away');
  const soon = rewritten(log, (entries) => (entries[away]!.seenAt = entries[away]!.time));
  assertFails(
    () => checkQueueFairness(config, soon, transcript),
    'audit.queue_rule_broken',
    /marked away when last seen 0 ms/,
  );
});

test('the check passes whatever the lobby writes: random joins, choices, polls, turns, verdicts, leaves', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'queue-fairness-random-'));
  try {
    for (const seed of [1, 2, 3, 4, 5]) {
      let state = seed;
      const random = (n: number): number => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % n;
      };
      const { lobby, clock } = makeLobby({ presenceMs: 60_000, takeTurnMs: 30_000, maxMissedTurns: 2 });
      const transcript = await initialisedTranscript(path.join(dir, `transcript-${seed}.jsonl`));
      const people = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay'];
      let uploads = 0;
      for (let step = 0; step < 300; step++) {
        const who = people[random(people.length)]!;
        const turn = lobby.activeTurns().find((t) => t.contributorId === who);
        switch (random(9)) {
          case 0:
            lobby.join(who, random(3) === 0 ? [CIRCUITS[random(3)]!] : undefined);
            break;
          case 1:
            lobby.seen(who);
            break;
          case 2:
            if (turn?.state === 'turn') lobby.takeTurn(who, turn.circuit);
            break;
          case 3:
            if (turn?.state === 'turn') {
              try {
                lobby.markSubmitted(who, turn.circuit, `u${++uploads}`);
              } catch {
                break; // its time to be taken ran out: the tick passes it on
              }
              if (random(3) === 0) {
                lobby.recordVerdict(`u${uploads}`, { status: 'refused', code: 'contribution.invalid', message: 'no' });
              } else {
                const index = transcript.entries.filter(
                  (e) => e.type === 'contribution' && e.circuit === turn.circuit,
                ).length;
                const [entry] = await transcript.append([
                  {
                    type: 'contribution',
                    circuit: turn.circuit,
                    index: index + 1,
                    contributor: who,
                    contributionHash: hex('a'),
                    fileHash: hex('b'),
                    sectionHashes: SECTIONS,
                  },
                ]);
                lobby.recordVerdict(`u${uploads}`, {
                  status: 'accepted',
                  chainIndex: index + 1,
                  contributionHash: hex('a'),
                  transcriptHash: entry!.hash,
                });
              }
            }
            break;
          case 4:
            lobby.leave(who);
            break;
          case 5:
            try {
              lobby.removeEntry(who);
            } catch {
              // not in the lobby, or being verified
            }
            break;
          default:
            clock.advance([1000, 20_000, 61_000, 11 * 60_000][random(4)]!);
            lobby.tick();
        }
      }
      const log = checkQueueLog('lobby-test', lobby.queueLog.entries(), `of seed ${seed}`);
      assert.ok(log.filter((e) => e.type === 'granted').length > 10, `seed ${seed}: turns were granted`);
      checkQueueFairness(config, log, transcript.entries);
    }
  } finally {
    await cleanUp(dir);
  }
});

test('a turn ended for its silent client passes as written, and fails ended too soon or without the rule', () => {
  const { lobby, clock } = makeLobby({ presenceMs: 60_000, takeTurnMs: 30_000, turnSilenceMs: 120_000 });
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick(); // alice
  lobby.takeTurn('alice', 'register');
  for (const step of [50_000, 60_000, 60_000, 30_001]) {
    clock.advance(step);
    lobby.seen('bob');
    if (step === 50_000) lobby.heartbeat('alice', 'register');
  }
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'alice'],
      ['turn_granted', 'bob'],
    ],
  );
  const silent = checkQueueLog('lobby-test', lobby.queueLog.entries(), 'of the lobby');
  assert.match(checkQueueFairness(config, silent, []), /2 turns granted, each to the first in line/);
  const lapse = silent.findIndex((e) => e.type === 'lapsed');
  const taken = silent.find((e) => e.type === 'taken')!;
  const tooSoon = rewritten(
    silent,
    (entries) => (entries[lapse]!.silentSince = new Date(clock.now() - 100_000).toISOString()),
  );
  assertFails(
    () => checkQueueFairness(config, tooSoon, []),
    'audit.queue_rule_broken',
    new RegExp(`entry ${lapse} \\(lapsed register, alice\\).*ended for silence before 120000 ms had passed`),
  );
  const beforeTaken = rewritten(
    silent,
    (entries) => (entries[lapse]!.silentSince = new Date(Date.parse(taken.time) - 1).toISOString()),
  );
  assertFails(
    () => checkQueueFairness(config, beforeTaken, []),
    'audit.queue_rule_broken',
    /before the turn was taken/,
  );
  const noRule = rewritten(silent, (entries) => {
    for (const entry of entries) if (entry.type === 'rules') delete entry.turnSilenceMs;
  });
  assertFails(
    () => checkQueueFairness(config, noRule, []),
    'audit.queue_rule_broken',
    /ended for silence, which the rules in force do not have/,
  );
});

test('a contributor passed over, and a turn passed on, for a closed stream pass as written, and fail too soon', () => {
  const { lobby, clock } = makeLobby({ presenceMs: 60_000, takeTurnMs: 30_000, disconnectGraceMs: 10_000 });
  for (const who of ['alice', 'bob', 'carol']) lobby.join(who);
  lobby.tick(); // alice's, not taken
  lobby.streamClosed('alice');
  lobby.streamClosed('bob');
  clock.advance(10_001);
  lobby.seen('carol');
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [
      ['turn_passed_on', 'alice'],
      ['turn_granted', 'carol'],
    ],
    'the turn passes on from alice and bob is passed over, both 10 s after their streams closed',
  );
  const log = checkQueueLog('lobby-test', lobby.queueLog.entries(), 'of the lobby');
  assert.match(checkQueueFairness(config, log, []), /2 turns granted, each to the first in line/);
  for (const type of ['lapsed', 'away'] as const) {
    const at = log.findIndex((e) => e.type === type);
    const tooSoon = rewritten(log, (entries) => {
      (entries[at] as { disconnectedAt?: string }).disconnectedAt = new Date(clock.now() - 5_000).toISOString();
    });
    assertFails(
      () => checkQueueFairness(config, tooSoon, []),
      'audit.queue_rule_broken',
      new RegExp(`entry ${at} \\(${type} register, .*before 10000 ms had passed since the stream closed`),
    );
  }
  const noRule = rewritten(log, (entries) => {
    for (const entry of entries) if (entry.type === 'rules') delete entry.disconnectGraceMs;
  });
  assertFails(
    () => checkQueueFairness(config, noRule, []),
    'audit.queue_rule_broken',
    /names a closed presence stream, which the rules in force do not count/,
  );
});

test('a taken turn missed for a closed stream passes as written, and fails ended inside the grace', () => {
  const { lobby, clock } = makeLobby({ presenceMs: 60_000, takeTurnMs: 30_000, disconnectGraceMs: 10_000 });
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick(); // alice
  lobby.takeTurn('alice', 'register');
  lobby.streamClosed('alice');
  clock.advance(10_001);
  lobby.seen('bob');
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'alice'],
      ['turn_granted', 'bob'],
    ],
  );
  const log = checkQueueLog('lobby-test', lobby.queueLog.entries(), 'of the lobby');
  assert.match(checkQueueFairness(config, log, []), /2 turns granted, each to the first in line/);
  const at = log.findIndex((e) => e.type === 'lapsed');
  const tooSoon = rewritten(log, (entries) => {
    (entries[at] as { disconnectedAt?: string }).disconnectedAt = new Date(clock.now() - 5_000).toISOString();
  });
  assertFails(
    () => checkQueueFairness(config, tooSoon, []),
    'audit.queue_rule_broken',
    /before 10000 ms had passed since the stream closed/,
  );
});

test('a publication without its queue log fails, unless the auditor says the ceremony had none', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'queue-fairness-missing-'));
  try {
    const ceremony = { id: 'lobby-test', dataDir: dir, circuits: config.circuits } as unknown as CeremonyConfig;
    const missing = await queueLogFinding(ceremony);
    assert.deepEqual([missing.ok, missing.code], [false, 'audit.queue_log_missing']);
    assert.match(
      missing.summary,
      /^\[audit\.queue_log_missing\] no transcript\/queue-log\.jsonl published: .*--no-queue-log$/,
    );
    const told = await queueLogFinding(ceremony, { noQueueLog: true });
    assert.equal(told.ok, true);
    assert.match(told.summary, /--no-queue-log says the ceremony had none .*: the order of turns is NOT checked$/);
    // There but unreadable is not "missing", whatever the auditor said.
    await mkdir(path.join(dir, 'transcript', 'queue-log.jsonl'), { recursive: true });
    const unreadable = await queueLogFinding(ceremony, { noQueueLog: true });
    assert.deepEqual([unreadable.ok, unreadable.code], [false, 'queue_log.corrupt']);
    assert.match(unreadable.summary, /could not be read \(EISDIR\)/);
  } finally {
    await cleanUp(dir);
  }
});

test('a log of format version 1 (missed turns counted otherwise) is refused, naming the version', () => {
  assert.throws(
    () =>
      rewritten(log, (entries) => {
        for (const entry of entries) if (entry.type === 'rules') entry.version = 1;
      }),
    (error: unknown) =>
      isCoordinatorError(error, 'queue_log.corrupt') &&
      /entry 0 .*states format version 1; this release reads version 2 only/.test(error.message),
  );
});

/**
 * The log of the m1/m2 loop (issue 62) as a lobby that applies it writes it: m1 and m2 joined
 * before `honest`, never take a turn, and poll, so each lapse puts the entry back in its place and
 * it comes back at once. `counts`: the lapses state missed-turn counts (a forger keeping up with
 * the count check); `regrant`: the turn goes straight back to the one that just passed it on.
 */
function loopLog({ counts, regrant = false }: { counts: boolean; regrant?: boolean }): QueueLogEntry[] {
  const rules = log.find((e) => e.type === 'rules')!;
  const { seq: _seq, time: _time, prevHash: _prev, hash: _hash, ...stated } = rules;
  let t = Date.parse(rules.time);
  const step = (type: string, who: string, fields: Record<string, unknown> = {}) => ({
    type,
    circuit: 'register',
    contributor: who,
    name: who,
    time: iso(t),
    ...fields,
  });
  const grant = (who: string) => step('granted', who, { deadline: iso(t + 10 * 60_000), takeBy: iso(t + 30_000) });
  return rewritten([], (entries) => {
    entries.push({ ...stated, time: iso(t) });
    ['m1', 'm2', 'honest'].forEach((who, i) => entries.push(step('join', who, { position: i + 1, via: 'join' })));
    const missed: Record<string, number> = { m1: 0, m2: 0 };
    let holder = 'm1';
    entries.push(grant(holder));
    for (let round = 0; round < 20; round++) {
      const next = regrant ? holder : holder === 'm1' ? 'm2' : 'm1';
      t += 30_001;
      missed[holder]!++;
      entries.push(step('lapsed', holder, { taken: false, ...(counts ? { missedTurns: missed[holder] } : {}) }));
      if (regrant) {
        t += 1000;
        entries.push(step('back', holder));
        entries.push(grant(next));
      } else {
        entries.push(grant(next));
        t += 1000;
        entries.push(step('back', holder));
      }
      holder = next;
    }
  });
}

test('the audit flags the m1/m2 loop: uncounted, back in place twice, or granted before the turn it passed on', () => {
  const uncounted = loopLog({ counts: false });
  assertFails(
    () => checkQueueFairness(config, uncounted, []),
    'audit.queue_rule_broken',
    /entry 5 \(lapsed register, m1\): it counts no missed turns; the log counts 1 \(every turn ended without/,
  );
  // Counted, each comes back in its place only once: the second untaken turn sends it to the back.
  const counted = loopLog({ counts: true });
  assertFails(
    () => checkQueueFairness(config, counted, []),
    'audit.queue_rule_broken',
    /\(back register, m1\): after entry \d+ \(lapsed register, m1\) the rules put the entry back in line/,
  );
  // Back in its place, an entry waits for the turn it passed on to end while another could take it.
  const regranted = loopLog({ counts: true, regrant: true });
  assertFails(
    () => checkQueueFairness(config, regranted, []),
    'audit.turn_out_of_order',
    joined(
      '',
      /\(granted register, m1\) gives the turn to m1, but m1 passed on its last turn here and the circuit's next /,
      /turn has not ended, while m2 \(in line since entry 2\) could take this one/,
    ),
  );
});

const SECOND = 1000;
/**
 * A hand-written log of a standby takeover (issue 62), as the lobby writes one: ann, bob, cat and
 * dan join register; ann is granted it (30 s to take it) and does not take it; `after` ms after the
 * grant, `by` takes it on standby: ann's lapse names them, their `granted` (no time to be taken)
 * and `taken` follow at the same time. `takePriorityMs` in the rules (10 s unless said; null:
 * absent); `rules` and `before` (entries just before the lapse) shape the case; `letPass`: the
 * entries offered the turn before `by`, whose `skipped` entries follow ann's lapse (bob when cat
 * takes it, unless said); `edit` changes the takeover's entries (lapse, [removal], the skipped
 * ones, grant, take) before the chain is computed.
 */
function standbyLog({
  after = 15 * SECOND,
  by = 'bob',
  takePriorityMs = 10 * SECOND,
  rules = {},
  before = () => [],
  letPass = by === 'cat' ? ['bob'] : [],
  edit = () => {},
}: {
  after?: number;
  by?: string;
  takePriorityMs?: number | null;
  rules?: Record<string, unknown>;
  before?: (at: number) => Array<Record<string, unknown>>;
  letPass?: string[];
  edit?: (takeover: Array<Record<string, unknown>>) => void;
} = {}): QueueLogEntry[] {
  const stated = { ...log.find((e) => e.type === 'rules')!, ...rules } as Record<string, unknown>;
  for (const key of ['seq', 'time', 'prevHash', 'hash', 'takePriorityMs']) delete stated[key];
  if (takePriorityMs !== null) stated.takePriorityMs = takePriorityMs;
  const start = Date.parse(log[0]!.time);
  const step = registerStep;
  const turnMs = Math.min(stated.turnTimeoutMs as number, stated.maxTurnMs as number);
  const at = start + after;
  const maxMissed = stated.maxMissedTurns as number;
  const takeover = [
    step('lapsed', 'ann', at, { taken: false, missedTurns: 1, takenOverBy: by }),
    ...(maxMissed === 1 ? [step('removed', 'ann', at, { reason: 'missed_turns' })] : []),
    ...letPass.flatMap((who) => [
      step('skipped', who, at, { takenOverBy: by, missedTurns: 1 }),
      ...(maxMissed === 1 ? [step('removed', who, at, { reason: 'missed_turns' })] : []),
    ]),
    step('granted', by, at, { deadline: iso(at + turnMs) }),
    step('taken', by, at),
  ];
  edit(takeover);
  return rewritten([], (entries) => {
    entries.push({ ...stated, type: 'rules', time: iso(start) });
    ['ann', 'bob', 'cat', 'dan'].forEach((who, i) =>
      entries.push(step('join', who, start, { position: i + 1, via: 'join' })),
    );
    const takeBy = start + (stated.takeTurnMs as number);
    entries.push(step('granted', 'ann', start, { deadline: iso(start + turnMs), takeBy: iso(takeBy) }));
    entries.push(...before(at), ...takeover);
  });
}

test('a turn taken on standby by an entry the rule offered it to passes, the grant not held to firstInLine', () => {
  assert.match(
    checkQueueFairness(config, standbyLog(), []),
    /2 turns granted, each to the first in line .* or, 1 of them, taken on standby .* \(at most 1 behind its grantee/,
  );
  // 20 s after the grant two entries are offered it: cat, though firstInLine would give bob the turn.
  // The verdict says how far behind the grantee a taker stood: the stated takePriorityMs sets that.
  assert.match(
    checkQueueFairness(config, standbyLog({ after: 20 * SECOND, by: 'cat' }), []),
    /taken on standby by an entry the standby rule offered it to \(at most 2 behind its grantee/,
  );
  // Bob marked away just before (the lobby finds him gone): cat is next in line at 10 s.
  const bobAway = (at: number) => [
    { type: 'away', circuit: 'register', contributor: 'bob', name: 'bob', time: new Date(at).toISOString() },
  ];
  const withAway = (seenAt: string) =>
    standbyLog({ by: 'cat', letPass: [], before: (at) => bobAway(at).map((e) => ({ ...e, seenAt })) });
  checkQueueFairness(config, withAway(new Date(Date.parse(log[0]!.time) - 60 * SECOND).toISOString()), []);
  // At the missed-turn limit, ann's removal comes between her lapse and bob's grant.
  checkQueueFairness(config, standbyLog({ rules: { maxMissedTurns: 1 } }), []);
  // The same when cat takes it: bob, offered it first, let it pass, and is removed as ann is.
  checkQueueFairness(config, standbyLog({ after: 20 * SECOND, by: 'cat', rules: { maxMissedTurns: 1 } }), []);
});

test('a takeover past an entry offered the turn first needs its skipped entry, and only its own', () => {
  assert.throws(
    () => checkQueueFairness(config, standbyLog({ after: 20 * SECOND, by: 'cat', letPass: [] }), []),
    /bob, offered the turn before cat, let it pass: its skipped entry comes next/,
  );
  assert.throws(
    () => checkQueueFairness(config, standbyLog({ after: 20 * SECOND, by: 'cat', letPass: ['dan'] }), []),
    /bob, offered the turn before cat, let it pass: its skipped entry comes next/,
  );
  assert.throws(
    () => checkQueueFairness(config, standbyLog({ by: 'bob', letPass: ['cat'] }), []),
    /cat was not offered the turn before bob, who took it on standby/,
  );
  const uncounted = standbyLog({
    after: 20 * SECOND,
    by: 'cat',
    edit: (t) =>
      Object.assign(
        t.find((e) => e.type === 'skipped')!,
        { missedTurns: 2 },
      ),
  });
  assert.throws(() => checkQueueFairness(config, uncounted, []), /it counts 2 missed turns; the log counts 1/);
});

test('a standby takeover under rules without standby, too early or after the time to be taken fails', () => {
  for (const takePriorityMs of [null, 0])
    assertFails(
      () => checkQueueFairness(config, standbyLog({ takePriorityMs }), []),
      'audit.queue_rule_broken',
      /entry 6 \(lapsed register, ann\): a turn taken over on standby by bob, which the rules in force do not have/,
    );
  assertFails(
    () => checkQueueFairness(config, standbyLog({ after: 10 * SECOND - 1 }), []),
    'audit.queue_rule_broken',
    /taken over on standby by bob 9999 ms after its grant, before the grantee's priority \(10000 ms\) ran out/,
  );
  assertFails(
    () => checkQueueFairness(config, standbyLog({ after: 30 * SECOND + 1 }), []),
    'audit.queue_rule_broken',
    /taken over on standby by bob after its time to be taken ran out \(.*\)/,
  );
  // At its takeBy exactly, still in time.
  checkQueueFairness(config, standbyLog({ after: 30 * SECOND }), []);
});

test('a standby takeover by an entry beyond the depth, or away, or not waiting, fails', () => {
  assertFails(
    () => checkQueueFairness(config, standbyLog({ after: 19_999, by: 'cat' }), []),
    'audit.turn_out_of_order',
    joined(
      '',
      /entry 6 \(lapsed register, ann\) has cat take the turn on standby 19999 ms after its grant, but cat was /,
      /not among the first 1 in line by the rules/,
    ),
  );
  const catAway = (at: number) => [
    {
      type: 'away',
      circuit: 'register',
      contributor: 'cat',
      name: 'cat',
      time: new Date(at).toISOString(),
      seenAt: new Date(at - 61 * SECOND).toISOString(),
    },
  ];
  assertFails(
    () => checkQueueFairness(config, standbyLog({ after: 20 * SECOND, by: 'cat', before: catAway }), []),
    'audit.turn_out_of_order',
    /has cat take the turn on standby 20000 ms after its grant, but cat was away/,
  );
  assertFails(
    () => checkQueueFairness(config, standbyLog({ by: 'eve' }), []),
    'audit.queue_rule_broken',
    /eve, who took the turn over on standby, is not waiting for it/,
  );
});

test("a standby takeover not followed at once by the taker's grant, with no time to be taken, and take fails", () => {
  const lateGrant = standbyLog({
    edit: (t) => (t[1]!.time = new Date(Date.parse(t[1]!.time as string) + 1).toISOString()),
  });
  assertFails(
    () => checkQueueFairness(config, lateGrant, []),
    'audit.queue_rule_broken',
    joined(
      '',
      /entry 7 \(granted register, bob\): after entry 6 \(lapsed register, ann\), taken over on standby by bob, /,
      /bob's granted of register comes next, at the same time/,
    ),
  );
  const noGrant = standbyLog({ edit: (t) => t.splice(1, 1) });
  assertFails(
    () => checkQueueFairness(config, noGrant, []),
    'audit.queue_rule_broken',
    /entry 7 \(taken register, bob\): after entry 6 .*, bob's granted of register comes next, at the same time/,
  );
  const otherGrant = standbyLog({ edit: (t) => Object.assign(t[1]!, { contributor: 'cat', name: 'cat' }) });
  assertFails(
    () => checkQueueFairness(config, otherGrant, []),
    'audit.queue_rule_broken',
    /entry 7 \(granted register, cat\): after entry 6 .*bob's granted of register comes next/,
  );
  const lateTake = standbyLog({
    edit: (t) => (t[2]!.time = new Date(Date.parse(t[2]!.time as string) + 1).toISOString()),
  });
  assertFails(
    () => checkQueueFairness(config, lateTake, []),
    'audit.queue_rule_broken',
    /entry 8 \(taken register, bob\): .*bob's taken of register comes next, at the same time/,
  );
  for (const [cut, missing] of [
    [1, 'granted'],
    [2, 'taken'],
  ] as const)
    assertFails(
      () => checkQueueFairness(config, standbyLog({ edit: (t) => t.splice(cut) }), []),
      'audit.queue_rule_broken',
      new RegExp(`entry 6 \\(lapsed register, ann\\): taken over on standby by bob, whose ${missing} does not follow`),
    );
  const withTakeBy = standbyLog({
    edit: (t) => (t[1]!.takeBy = new Date(Date.parse(t[1]!.time as string) + 30 * SECOND).toISOString()),
  });
  assertFails(
    () => checkQueueFairness(config, withTakeBy, []),
    'audit.queue_rule_broken',
    /entry 7 \(granted register, bob\): its deadline .* \(a turn taken on standby is taken at once: it has no time/,
  );
});

test('a turn not taken that passes on before its time to be taken, naming no takeover, still fails', () => {
  const passedOn = standbyLog({
    edit: (t) => {
      delete t[0]!.takenOverBy;
      t.splice(2, 1);
      t[1]!.takeBy = new Date(Date.parse(t[1]!.time as string) + 30 * SECOND).toISOString();
    },
  });
  assertFails(
    () => checkQueueFairness(config, passedOn, []),
    'audit.queue_rule_broken',
    /entry 6 \(lapsed register, ann\): the turn passed on before its time to be taken ran out/,
  );
});

test('with a stated standbyStepMs a take two behind at priority + 1 step passes, a millisecond before fails', () => {
  const stepped = (after: number) => standbyLog({ after, by: 'cat', rules: { standbyStepMs: 2500 } });
  assert.match(
    checkQueueFairness(config, stepped(12_500), []),
    /at most 2 behind its grantee, by the stated takePriorityMs and standbyStepMs/,
  );
  assertFails(
    () => checkQueueFairness(config, stepped(12_499), []),
    'audit.turn_out_of_order',
    /has cat take the turn on standby 12499 ms after its grant, but cat was not among the first 1 in line/,
  );
  // The grantee's priority is whole whatever the step: the next in line not before it.
  assertFails(
    () => checkQueueFairness(config, standbyLog({ after: 9_999, rules: { standbyStepMs: 2500 } }), []),
    'audit.queue_rule_broken',
    /before the grantee's priority \(10000 ms\) ran out/,
  );
  // A log that states no step (older ceremonies) replays with a step of takePriorityMs, as before.
  assert.equal('standbyStepMs' in standbyLog()[0]!, false);
  checkQueueFairness(config, standbyLog({ after: 20_000, by: 'cat' }), []);
  assertFails(
    () => checkQueueFairness(config, standbyLog({ after: 19_999, by: 'cat' }), []),
    'audit.turn_out_of_order',
    /not among the first 1 in line/,
  );
});

test('a stated standbyStepMs over takePriorityMs, of 0, not whole, or without standby is refused as corrupt', () => {
  for (const [rules, takePriorityMs] of [
    [{ standbyStepMs: 10_001 }, 10_000],
    [{ standbyStepMs: 0 }, 10_000],
    [{ standbyStepMs: 2.5 }, 10_000],
    [{ standbyStepMs: '2500' }, 10_000],
    [{ standbyStepMs: 2500 }, null],
    [{ standbyStepMs: 2500 }, 0],
  ] as const)
    assert.throws(
      () => standbyLog({ rules, takePriorityMs }),
      (error: unknown) =>
        isCoordinatorError(error, 'queue_log.corrupt') && /entry 0 .*its standbyStepMs is/.test(error.message),
      JSON.stringify([rules, takePriorityMs]),
    );
  // At takePriorityMs exactly it is the rule before the step, stated.
  checkQueueFairness(config, standbyLog({ after: 20_000, by: 'cat', rules: { standbyStepMs: 10_000 } }), []);
});
