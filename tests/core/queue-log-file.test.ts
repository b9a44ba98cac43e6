/**
 * The published queue log read as a stream by the audit (core/audit/queue-log-file.ts, issue 62:
 * the coordinator writes the log the auditor reads): a log larger than one read's chunk replays as
 * the same log in memory does, a line beyond the stated size or more entries than the stated count
 * are refused (never read whole), the verdict ranks failures as reading the whole text did (a line
 * not JSON, then an entry's shape, then the chain, then the replay), and a crafted entry cannot
 * make the finding's message unbounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkQueueFairness, queueLogFinding } from '../../core/audit/check-queue-fairness.ts';
import { QUEUE_LOG_LINE_MAX } from '../../core/audit/queue-log-file.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import {
  checkQueueLog,
  queueLogGenesisHash,
  QUEUE_LOG_FILE,
  QUEUE_LOG_MAX_ENTRIES,
} from '../../core/queue-log/queue-log-entry.ts';
import { chainEntryHash } from '../../core/transcript/hash-chain.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { iso, REGISTER_RULES, registerStep } from '../helpers/queue-log-steps.ts';

const ID = 'stream-test';
const START = Date.parse('2026-01-01T00:00:00.000Z');
const RULES = REGISTER_RULES;
const step = registerStep;

/** Chains `events` from the genesis, as the coordinator writes them. */
function chained(events: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  let prevHash = queueLogGenesisHash(ID);
  return events.map((event, seq) => {
    const entry: Record<string, unknown> = { seq, time: iso(START), prevHash, ...event };
    entry.hash = chainEntryHash(entry);
    prevHash = entry.hash as string;
    return entry;
  });
}

/** `joins` contributors join, then the first `grants` of them are granted a turn each, and leave it. */
function honest(joins: number, grants: number): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [{ ...RULES, time: iso(START) }];
  for (let i = 0; i < joins; i++) events.push(step('join', `c${i}`, START, { position: i + 1, via: 'join' }));
  for (let i = 0; i < grants; i++) {
    events.push(step('granted', `c${i}`, START + i, { deadline: iso(START + i + 60_000) }));
    events.push(step('left', `c${i}`, START + i, { from: 'turn', missedTurns: 1 }));
  }
  return chained(events);
}

const jsonl = (entries: readonly unknown[]) => entries.map((e) => JSON.stringify(e)).join('\n') + '\n';

async function findingOf(text: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'queue-log-file-'));
  try {
    await mkdir(path.join(dir, 'transcript'), { recursive: true });
    await writeFile(path.join(dir, QUEUE_LOG_FILE), text);
    const ceremony = { id: ID, dataDir: dir, circuits: [{ name: 'register' }] } as unknown as CeremonyConfig;
    return await queueLogFinding(ceremony);
  } finally {
    await cleanUp(dir);
  }
}

test('a log of several read chunks replays as the same log in memory does', async () => {
  const log = honest(6000, 3000);
  const text = jsonl(log);
  assert.ok(text.length > 2 * QUEUE_LOG_LINE_MAX, 'the log spans several reads');
  const finding = await findingOf(text);
  assert.equal(finding.ok, true, finding.summary);
  assert.equal(
    finding.summary,
    checkQueueFairness({ circuits: [{ name: 'register' }] }, checkQueueLog(ID, log, 't'), []),
  );
  assert.match(finding.summary, /^12001 entries, hash chain intact; 3000 turns granted/);
  const noLastNewline = await findingOf(text.slice(0, -1));
  assert.equal(noLastNewline.summary, finding.summary);
});

test('a line longer than the stated size is refused, not read whole', async () => {
  const log = honest(3, 1);
  const long = { ...log[1], name: 'x'.repeat(QUEUE_LOG_LINE_MAX) };
  const finding = await findingOf(jsonl([log[0], long, ...log.slice(2)]));
  assert.deepEqual([finding.ok, finding.code], [false, 'queue_log.corrupt']);
  assert.match(finding.summary, /has a line 2 longer than 1048576 bytes/);
  const unended = await findingOf(jsonl(log) + 'y'.repeat(QUEUE_LOG_LINE_MAX + 1));
  assert.match(unended.summary, /has a line 7 longer than 1048576 bytes/);
});

test('a log of more entries than any ceremony logs is refused, whatever comes before', async () => {
  const finding = await findingOf('{}\n'.repeat(QUEUE_LOG_MAX_ENTRIES + 1));
  assert.deepEqual([finding.ok, finding.code], [false, 'queue_log.corrupt']);
  assert.match(finding.summary, /has more than 1000000 entries, far beyond any ceremony's/);
});

test('the verdict ranks failures as reading the whole log did: JSON, shape, chain, then the replay', async () => {
  const log = honest(3, 2);
  // The replay fails at entry 4: c1 granted while c0 is first in line.
  const outOfOrder = chained([0, 1, 2, 3, 6].map((i) => strip(log[i]!)));
  const replayOnly = await findingOf(jsonl(outOfOrder));
  assert.equal(replayOnly.code, 'audit.turn_out_of_order', replayOnly.summary);
  const brokenChain = [...outOfOrder, { ...outOfOrder[1], seq: 5 }];
  assert.match((await findingOf(jsonl(brokenChain))).summary, /breaks its hash chain at entry 5/);
  const badShape = [...brokenChain, { ...outOfOrder[1], seq: 6, extra: 1 }];
  assert.match((await findingOf(jsonl(badShape))).summary, /has an entry 6 that is not a queue-log entry/);
  const notJson = jsonl(badShape) + '{\n';
  assert.match(
    (await findingOf(notJson)).summary,
    /\[queue_log\.corrupt\] the queue log .* has a line 8 that is not JSON/,
  );
});

test("a crafted entry's words are cut short in the finding", async () => {
  const log = honest(1, 0);
  const circuits = Array.from({ length: 20_000 }, (_, i) => `circuit-${i}`);
  const manyCircuits = chained([{ ...strip(log[0]!), circuits }]);
  const finding = await findingOf(jsonl(manyCircuits));
  assert.equal(finding.code, 'audit.queue_log_mismatch');
  assert.ok(finding.summary.length < 1000, `${finding.summary.length} characters`);
  assert.match(finding.summary, /more characters\)/);
  const longType = chained([{ ...strip(log[0]!), type: 't'.repeat(100_000) }]);
  const typed = await findingOf(jsonl(longType));
  assert.ok(typed.summary.length < 1000, `${typed.summary.length} characters`);
});

/** An entry without its chain fields, to be chained again. */
function strip(entry: Record<string, unknown>): Record<string, unknown> {
  const { seq: _seq, prevHash: _prev, hash: _hash, ...event } = entry;
  return event;
}
