/**
 * What replaying a queue log costs the auditor (`ceremony audit`'s fairness check,
 * core/audit/check-queue-fairness.ts), the log being the coordinator's to write (issue 62): for
 * each kind of log and each size, a log is generated (hash-chained, as published), then a child
 * process audits it as `ceremony audit` does (queueLogFinding: the file streamed, its chain
 * checked, each entry replayed) and, apart, replays the same entries from memory
 * (checkQueueFairness), printing entries/s for both and the child's peak RSS after the audit.
 * Both should be linear in the entries: the same entries/s at every size.
 *  - honest:  a steady queue of 200 waiting: each turn a join at the back, the first granted, its
 *             turn ended (left); now and then an entry well back marked away, and back;
 *  - scan:    crafted against a replay that walks the queue: a fifth of the entries join and are
 *             marked away (a block at the front), a fifth join behind them, and each of those is
 *             granted a turn in turn (and leaves it): every grant's "first in line" passes the block;
 *  - standby: crafted against the standby check: the same away block, then pairs join; each pair's
 *             first is granted, and 1 ms later (takePriorityMs 1) its second takes the turn over on
 *             standby, behind the block and every earlier grantee (back in place, away): no
 *             `skipped` entry, so a walk of the queue is paid by nobody's line.
 *
 * Usage: tsx bench/queue-log-replay.ts [--entries 200000] [--logs honest,scan,standby] [--keep]
 *        (--entries takes a list: 50000,100000,200000 shows the slope)
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkQueueFairness, queueLogFinding } from '../core/audit/check-queue-fairness.ts';
import type { CeremonyConfig } from '../core/config/ceremony-config.ts';
import { QUEUE_LOG_FILE, queueLogGenesisHash, type QueueLogEntry } from '../core/queue-log/queue-log-entry.ts';
import { chainEntryHash } from '../core/transcript/hash-chain.ts';
import { parseBenchArgs } from './bench-args.ts';
import { iso, REGISTER_RULES } from '../tests/helpers/queue-log-steps.ts';

const ID = 'queue-log-replay-bench';
const CIRCUITS = [{ name: 'register' }];
const START = Date.parse('2026-01-01T00:00:00.000Z');
const RULES = { ...REGISTER_RULES, presenceMs: 1000 };
const LOGS = ['honest', 'scan', 'standby'] as const;
type LogKind = (typeof LOGS)[number];

/** Writes hash-chained entries to `file` as they are made (the log never held whole). */
class LogWriter {
  private readonly fd: number;
  private prevHash = queueLogGenesisHash(ID);
  private batch: string[] = [];
  count = 0;

  constructor(file: string) {
    this.fd = openSync(file, 'w');
  }

  add(event: Record<string, unknown>): void {
    const entry: Record<string, unknown> = { seq: this.count++, prevHash: this.prevHash, ...event };
    entry.hash = chainEntryHash(entry);
    this.prevHash = entry.hash as string;
    this.batch.push(JSON.stringify(entry));
    if (this.batch.length >= 4096) this.flush();
  }

  step(type: string, who: string, at: number, fields: Record<string, unknown> = {}): void {
    this.add({ type, circuit: 'register', contributor: who, name: who, time: iso(at), ...fields });
  }

  flush(): void {
    if (this.batch.length > 0) writeSync(this.fd, `${this.batch.join('\n')}\n`);
    this.batch = [];
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

const grant = (log: LogWriter, who: string, at: number, takeBy?: number) =>
  log.step('granted', who, at, { deadline: iso(at + 60_000), ...(takeBy ? { takeBy: iso(takeBy) } : {}) });
const leaveTurn = (log: LogWriter, who: string, at: number) =>
  log.step('left', who, at, { from: 'turn', missedTurns: 1 });

function honestLog(log: LogWriter, entries: number): void {
  log.add({ ...RULES, time: iso(START) });
  const line: string[] = [];
  let head = 0;
  let t = START;
  const join = (who: string) => {
    line.push(who);
    log.step('join', who, t, { position: line.length - head, via: 'join' });
  };
  for (let i = 0; i < 200; i++) join(`c${i}`);
  for (let turn = 0; log.count < entries; turn++) {
    t += 10;
    join(`c${line.length}`);
    if (turn % 20 === 0) log.step('away', line[head + 50]!, t, { seenAt: iso(t - 2000) });
    if (turn % 20 === 1) log.step('back', line[head + 49]!, t);
    grant(log, line[head]!, t);
    leaveTurn(log, line[head++]!, t + 1);
  }
}

/** `block` entries join and are marked away: the front of the line, never eligible. */
function awayBlock(log: LogWriter, block: number, t: number): void {
  for (let i = 0; i < block; i++) log.step('join', `a${i}`, t, { position: i + 1, via: 'join' });
  for (let i = 0; i < block; i++) log.step('away', `a${i}`, t + 2000, { seenAt: iso(t) });
}

function scanLog(log: LogWriter, entries: number): void {
  log.add({ ...RULES, time: iso(START) });
  const block = Math.floor(entries / 5);
  awayBlock(log, block, START);
  const granted = Math.floor((entries - 2 * block - 1) / 3);
  let t = START + 3000;
  for (let i = 0; i < granted; i++) log.step('join', `g${i}`, t, { position: block + i + 1, via: 'join' });
  for (let i = 0; i < granted; i++) {
    t += 10;
    grant(log, `g${i}`, t);
    leaveTurn(log, `g${i}`, t + 1);
  }
}

function standbyLog(log: LogWriter, entries: number): void {
  log.add({ ...RULES, takeTurnMs: 60_000, takePriorityMs: 1, time: iso(START) });
  const block = Math.floor(entries / 5);
  awayBlock(log, block, START);
  const pairs = Math.floor((entries - 2 * block - 1) / 7);
  let t = START + 3000;
  for (let i = 0; i < pairs; i++) {
    log.step('join', `g${i}`, t, { position: block + 2 * i + 1, via: 'join' });
    log.step('join', `t${i}`, t, { position: block + 2 * i + 2, via: 'join' });
  }
  for (let i = 0; i < pairs; i++) {
    t += 10;
    grant(log, `g${i}`, t, t + 60_000);
    log.step('lapsed', `g${i}`, t + 1, { taken: false, missedTurns: 1, takenOverBy: `t${i}` });
    grant(log, `t${i}`, t + 1);
    log.step('taken', `t${i}`, t + 1);
    leaveTurn(log, `t${i}`, t + 2);
  }
}

interface ChildResult {
  entries: number;
  ok: boolean;
  summary: string;
  auditMs: number;
  replayMs: number;
  peakRssMiB: number;
}

/** In the child: the audit of the log in `dir`, then the replay alone from memory. */
async function child(dir: string): Promise<void> {
  const config = { id: ID, dataDir: dir, circuits: CIRCUITS } as unknown as CeremonyConfig;
  const auditStart = performance.now();
  const finding = await queueLogFinding(config);
  const auditMs = performance.now() - auditStart;
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  const lines = readFileSync(path.join(dir, QUEUE_LOG_FILE), 'utf8').split('\n');
  lines.pop();
  const log = lines.map((line) => JSON.parse(line) as QueueLogEntry);
  const replayStart = performance.now();
  checkQueueFairness(config, log, []);
  const replayMs = performance.now() - replayStart;
  const result: ChildResult = {
    entries: log.length,
    ok: finding.ok,
    summary: finding.summary.slice(0, 160),
    auditMs,
    replayMs,
    peakRssMiB,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function generate(kind: LogKind, entries: number, dir: string): void {
  mkdirSync(path.join(dir, 'transcript'), { recursive: true });
  const log = new LogWriter(path.join(dir, QUEUE_LOG_FILE));
  ({ honest: honestLog, scan: scanLog, standby: standbyLog })[kind](log, entries);
  log.close();
}

async function main(): Promise<void> {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      entries: { type: 'string', default: '200000' },
      logs: { type: 'string', default: LOGS.join(',') },
      keep: { type: 'boolean', default: false },
      child: { type: 'string' },
    },
  });
  if (values.child) return child(values.child);
  const kinds = values.logs.split(',').map((k) => k.trim()) as LogKind[];
  for (const kind of kinds) if (!LOGS.includes(kind)) throw new Error(`--logs: unknown log "${kind}"`);
  const sizes = values.entries.split(',').map(Number);
  const work = mkdtempSync(path.join(tmpdir(), 'queue-log-replay-'));
  const script = fileURLToPath(import.meta.url);
  console.log('log      entries   audit (stream+chain+replay)   replay alone        peak RSS  verdict');
  try {
    for (const kind of kinds) {
      for (const size of sizes) {
        const dir = path.join(work, `${kind}-${size}`);
        generate(kind, size, dir);
        const run = spawnSync(process.execPath, ['--import', 'tsx', script, '--child', dir], { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`the child exited with ${run.status}: ${run.stderr}`);
        const r = JSON.parse(run.stdout) as ChildResult;
        const rate = (ms: number) => `${Math.round(r.entries / (ms / 1000)).toLocaleString('en')}/s`;
        console.log(
          `${kind.padEnd(8)} ${String(r.entries).padStart(7)}   ${(r.auditMs / 1000).toFixed(2).padStart(7)} s ` +
            `${rate(r.auditMs).padStart(12)}        ${(r.replayMs / 1000).toFixed(2).padStart(6)} s ` +
            `${rate(r.replayMs).padStart(11)}  ${r.peakRssMiB.toFixed(0).padStart(5)} MiB  ` +
            `${r.ok ? 'ok' : `FAILED ${r.summary}`}`,
        );
        if (!values.keep) rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    if (!values.keep) rmSync(work, { recursive: true, force: true });
  }
}

await main();
