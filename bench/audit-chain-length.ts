/**
 * The audit against the length of a chain, at rs18 (issue 65's goals), in one process:
 *  - one rs18 circuit laid out as a published ceremony once per length (default 2 and 20
 *    contributions, each chain sealed by the beacon): every chain extends the shortest, on the same
 *    contribution 0, z1 and z2 (bench-chain.ts), then c3…cN and final-after-N in the fixture cache's
 *    bench-audit-chain-rs18/ (bench/audit.ts's templateChain), each file made once and kept, so later
 *    runs audit the very same keys;
 *  - each folder audited by `ceremony audit`'s default (each chain's final key against contribution 0)
 *    in rounds, the lengths alternately, three ways: the ptau's sections and contribution 0
 *    checked (`--recheck`, both remembered after); the ptau remembered, contribution 0 checked; both
 *    remembered (a second audit as the CLI makes it, on its default memos). Every file is hashed and
 *    held to its pin or transcript entry every time;
 *  - `snarkjs zkey verify` (verifyFromR1cs: it rebuilds contribution 0 and checks the chain) of the
 *    longest chain's final key, the same run, against the audits of that folder.
 *  - each audit's floor (bench/audit-floor.ts): the work it counted (MSM points by kind, bytes hashed,
 *    inverse FFTs) priced at rates measured in the same run, after the audits; a lower bound.
 * The goals: the longest chain's audit ≤ 1.15× the shortest's; the second audit ≤ 0.5× the first;
 * snarkjs ≥ 20× the audit with the ptau remembered. With --every-link, the same folders are also
 * audited link by link (both remembered), for comparison. The audits use memo folders of their own,
 * emptied first, never the auditor's cache.
 *
 * Usage: tsx bench/audit-chain-length.ts [--lengths 2,20] [--rounds 2] [--every-link] [--no-snarkjs]
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { hashFile } from '../core/crypto/file-hash.ts';
import { closeMultiExp } from '../core/kernel/multi-exp.ts';
import { takeWorkTally } from '../core/runtime/work-tally.ts';
import type { ChainCheck } from '../core/audit/audit-report-parts.ts';
import { FIXTURE_CACHE } from '../tests/fixtures/ceremony-fixture.ts';
import { benchLog, realShapedChain } from './bench-chain.ts';
import { parseBenchArgs } from './bench-args.ts';
import { auditFloor, auditFloorLines } from './audit-floor.ts';
import {
  auditOnce,
  layOutCeremony,
  templateChain,
  type AuditMarks,
  type AuditPins,
  type BenchCircuit,
  type TemplateChain,
} from './audit.ts';

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const CIRCUIT: BenchCircuit = { name: 'transact21', verifier: 'VerifierTransact21', shape: 'rs18' };

/** How an audit is run: which check, and what it may take from the memos. */
interface AuditKind {
  label: string;
  chainCheck: ChainCheck;
  /** Check the ptau's sections and contribution 0 again (and remember them). */
  recheck: boolean;
  /** Remember contribution 0 (else it is checked every time). */
  initialKeyMemo: boolean;
}

const KINDS: AuditKind[] = [
  { label: 'checked', chainCheck: 'final-key', recheck: true, initialKeyMemo: true },
  { label: 'ptau remembered', chainCheck: 'final-key', recheck: false, initialKeyMemo: false },
  { label: 'both remembered', chainCheck: 'final-key', recheck: false, initialKeyMemo: true },
];
const EVERY_LINK: AuditKind = {
  label: 'every link, both remembered',
  chainCheck: 'every-link',
  recheck: false,
  initialKeyMemo: true,
};

/** One audit's time and its parts, from the audit's progress events (bench/audit.ts's marks). */
interface Measured {
  total: number;
  zero: number;
  chain: number;
}

function parts(marks: AuditMarks, total: number): Measured {
  const mark = marks.get(CIRCUIT.name);
  const zero = mark?.check !== undefined && mark.links !== undefined ? mark.links - mark.check : 0;
  const chain = mark?.links !== undefined && mark.finished !== undefined ? mark.finished - mark.links : 0;
  return { total, zero, chain };
}

const mean = (values: number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;

const { values } = parseBenchArgs(import.meta.url, {
  options: {
    lengths: { type: 'string', default: '2,20' },
    rounds: { type: 'string', default: '2' },
    'every-link': { type: 'boolean', default: false },
    'no-snarkjs': { type: 'boolean', default: false },
  },
});
const lengths = values.lengths.split(',').map(Number);
if (lengths.length < 2 || lengths.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('--lengths takes two or more whole numbers from 1, e.g. 2,20');
const rounds = Number(values.rounds);
const kinds = values['every-link'] ? [...KINDS, EVERY_LINK] : KINDS;

const shape = await realShapedChain('rs18');
const templates = new Map<number, TemplateChain>();
// The longest first: its keys are the shorter chains' too (only each final key is its own).
for (const length of [...lengths].sort((a, b) => b - a)) templates.set(length, await templateChain(shape, length));

const folder = path.join(FIXTURE_CACHE, `bench-audit-length-${process.pid}`);
const memos = { ptau: path.join(folder, 'ptau-memo'), initialKey: path.join(folder, 'initial-key-memo') };
await rm(folder, { recursive: true, force: true });
const times = new Map<string, Measured[]>();
/** Each audit's work (core/runtime/work-tally.ts), priced after the audits into its floor (audit-floor.ts). */
const work = new Map<string, Map<string, number>>();
let verify: number | undefined;
try {
  const dirs = new Map<number, string>();
  for (const length of lengths) {
    const dir = path.join(folder, `chain-of-${length}`);
    await layOutCeremony(dir, new Map([['rs18', templates.get(length)!]]), [CIRCUIT]);
    dirs.set(length, dir);
  }
  const ptauHash = await hashFile(shape.ptau);
  const r1csHashes = { [CIRCUIT.name]: await hashFile(shape.r1cs) };
  for (let round = 1; round <= rounds; round++)
    for (const kind of kinds)
      for (const length of lengths) {
        benchLog(`round ${round}: the chain of ${length}, ${kind.label} (${kind.chainCheck})`);
        const pins: AuditPins = {
          ptauHash,
          r1csHashes,
          ptauMemoDir: memos.ptau,
          ...(kind.initialKeyMemo ? { initialKeyMemoDir: memos.initialKey } : {}),
          recheck: kind.recheck,
          chainCheck: kind.chainCheck,
        };
        takeWorkTally(); // counts of this audit only
        const { marks, total } = await auditOnce(dirs.get(length)!, pins);
        const key = `${kind.label} ${length}`;
        times.set(key, [...(times.get(key) ?? []), parts(marks, total)]);
        // The same audit does the same work every round: the last round's counts stand for all.
        work.set(key, takeWorkTally());
      }
  if (!values['no-snarkjs']) {
    const longest = Math.max(...lengths);
    benchLog(`snarkjs zkey verify of the chain of ${longest}'s final key`);
    const start = performance.now();
    const ok = await snarkjs.zKey.verifyFromR1cs(shape.r1cs, shape.ptau, templates.get(longest)!.final, silent);
    verify = performance.now() - start;
    if (!ok) throw new Error('snarkjs zkey verify refused the bench chain');
  }
} finally {
  await rm(folder, { recursive: true, force: true });
}

const [shortest, longest] = [Math.min(...lengths), Math.max(...lengths)];
const meanOf = (kind: AuditKind, length: number): number =>
  mean(times.get(`${kind.label} ${length}`)!.map((m) => m.total));
const lines = [
  '',
  `ceremony audit of one rs18 chain (${shape.constraints} constraints) by its length, ${rounds} round(s), ` +
    'mean whole audit (contribution 0 / the chain after it, means)',
  `  ${'audit'.padEnd(30)}${lengths.map((n) => `${n} contributions`.padStart(30)).join('')}`,
];
for (const kind of kinds) {
  const cells = lengths.map((length) => {
    const measured = times.get(`${kind.label} ${length}`)!;
    const [total, zero, chain] = (['total', 'zero', 'chain'] as const).map((part) =>
      seconds(mean(measured.map((m) => m[part]))),
    );
    return `${total} (${zero} / ${chain})`.padStart(30);
  });
  lines.push(`  ${`${kind.label} (${kind.chainCheck})`.padEnd(30)}${cells.join('')}`);
}
const [checked, ptauRemembered, remembered] = KINDS as [AuditKind, AuditKind, AuditKind];
lines.push(
  `  ${longest} ÷ ${shortest} contributions, checked            ` +
    `${(meanOf(checked, longest) / meanOf(checked, shortest)).toFixed(2)}  (goal ≤ 1.15)`,
  `  ${longest} ÷ ${shortest} contributions, ptau remembered    ` +
    `${(meanOf(ptauRemembered, longest) / meanOf(ptauRemembered, shortest)).toFixed(2)}`,
  `  ${longest} ÷ ${shortest} contributions, both remembered    ` +
    `${(meanOf(remembered, longest) / meanOf(remembered, shortest)).toFixed(2)}`,
);
for (const length of lengths)
  lines.push(
    `  second audit ÷ first, ${length} contributions: ptau remembered ` +
      `${(meanOf(ptauRemembered, length) / meanOf(checked, length)).toFixed(2)}, both remembered ` +
      `${(meanOf(remembered, length) / meanOf(checked, length)).toFixed(2)}  (goal ≤ 0.5)`,
  );
if (verify !== undefined)
  lines.push(
    `  snarkjs zkey verify of the final key of ${longest}: ${seconds(verify)} = ` +
      `${(verify / meanOf(ptauRemembered, longest)).toFixed(1)} × the audit with the ptau remembered, ` +
      `${(verify / meanOf(remembered, longest)).toFixed(1)} × with both remembered  (goal ≥ 20)`,
  );
// Priced after every audit, so measuring the rates does not warm or crowd any of them.
for (const kind of kinds)
  for (const length of lengths) {
    const key = `${kind.label} ${length}`;
    lines.push(`  the audit's floor, ${key} (${kind.chainCheck}; audit-floor.ts: a lower bound):`);
    lines.push(...auditFloorLines(await auditFloor(work.get(key)!), meanOf(kind, length), '    '));
  }
process.stdout.write(`${lines.join('\n')}\n`);
await closeMultiExp();
await releaseBn128();
