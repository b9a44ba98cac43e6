/**
 * `ceremony audit` passes on a good published folder and fails on any single-byte tampering of a
 * zkey, the transcript or the manifest, naming what is wrong. By default it checks each final key
 * against contribution 0; with --every-link it also catches a forged key between whose transcript was
 * rewritten to match, so it relies on verification, not only on file hashes: the incremental
 * one-pass check of each chain refuses a replaced point in a link (L of a contribution, H of the
 * final key, where the previous combination is the one carried forward) and a final key made with
 * another beacon than the transcript announces. The untouched ceremony is audited with
 * its nine circuits; the tampered ones are copies of a two-circuit ceremony (TWO_CIRCUITS), where
 * the audit's findings still have to name the one circuit at fault.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { devPtauHash, finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { auditCeremony, type AuditOptions, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { entryHash, genesisHash, type TranscriptEntry } from '../../core/transcript/transcript.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { readZkeyInfo, SECTION } from '../../core/zkey/zkey-file.ts';
import { runCli, type CliResult } from '../helpers/run-cli.ts';
import * as snarkjs from 'snarkjs';
import type { CeremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { twoCircuitCeremony } from '../helpers/two-circuit-ceremony.ts';
import { processAuditMemos } from '../helpers/audit-memos.ts';

/** Two circuits finalised: what the tampering tests copy, change and audit. */
const fixture = twoCircuitCeremony();
const copies = fixture.copies;

/**
 * What the default (`final-key`) audit of a forged ceremony may pass that the link-by-link one
 * (`every-link`) fails: `circuit`, whose forgery lies in a key between only (its L or H), which the
 * default does not check (docs/audit.md): its verdict must say so.
 */
interface FinalKeyGap {
  circuit: string;
}

/**
 * Copies the ceremony, tampers with it, and audits it link by link (`chainCheck: 'every-link'`),
 * returning that report; the same forged copy is then audited by default (the final key against
 * contribution 0) too ("Honesty": the default must fail the same findings with the same codes, but
 * for a declared `gap`).
 */
async function tamperedCeremony(
  tamper: (dir: string) => Promise<void>,
  options: Omit<AuditOptions, 'ptauHash' | 'auditorConfig' | 'chainCheck'> = {},
  gap?: FinalKeyGap,
): Promise<AuditReport> {
  const dir = await fixture.copy();
  await tamper(dir);
  // The auditor's ceremony.json is the untouched ceremony's.
  // The file's memos: what the tampering leaves untouched is checked once a file.
  const audit = async (chainCheck?: 'every-link') =>
    auditCeremony(dir, undefined, {
      ...processAuditMemos(),
      ...options,
      ...(chainCheck ? { chainCheck } : {}),
      noQueueLog: true,
      auditorConfig: fixture.auditorConfig(),
      ptauHash: await devPtauHash(),
    });
  const everyLink = await audit('every-link');
  const byDefault = await audit();
  assertAsHonest(everyLink, byDefault, gap);
  return everyLink;
}

/** Each finding the link-by-link audit fails, the default one fails with the same code (but a declared gap). */
function assertAsHonest(everyLink: AuditReport, finalKey: AuditReport, gap?: FinalKeyGap): void {
  const codes = (report: AuditReport) =>
    report.findings.filter((f) => !f.ok).map((f) => `${f.subject} ${f.code ?? f.summary.slice(0, 40)}`);
  if (!gap) {
    assert.deepEqual(codes(finalKey), codes(everyLink), 'the default audit fails what the link-by-link one fails');
    return;
  }
  assert.ok(failed(everyLink).includes(gap.circuit));
  const passed = finalKey.findings.find((f) => f.subject === gap.circuit)!;
  assert.equal(passed.ok, true, 'the declared gap: the default audit does not check the L and H of a key between');
  assert.match(
    passed.summary,
    /final-key check \(the default\): .*their L and H NOT checked \(.*--every-link checks them\)/,
  );
  assert.equal(finalKey.circuits.find((c) => c.name === gap.circuit)!.check, 'final-key');
}

async function flipByte(file: string, offset: number): Promise<void> {
  const bytes = await readFile(file);
  bytes[offset] = bytes[offset]! ^ 0x01;
  await writeFile(file, bytes);
}

async function replaceOnce(file: string, from: RegExp, to: (match: string) => string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const match = text.match(from);
  assert.ok(match, `${from} not found in ${file}`);
  await writeFile(file, text.replace(from, to(match[0])));
}

/** Rewrites the transcript as a forger would: entries changed, every hash after them recomputed. */
async function rewriteTranscript(paths: CeremonyPaths, change: (entry: TranscriptEntry) => void): Promise<void> {
  const entries: TranscriptEntry[] = (await readFile(paths.transcriptPath, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  let prevHash = genesisHash(fixture.published.config.id);
  for (const entry of entries) {
    change(entry);
    entry.prevHash = prevHash;
    entry.hash = entryHash(entry);
    prevHash = entry.hash;
  }
  await writeFile(paths.transcriptPath, entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
}

/** Replaces point `index` of a G1 section with point `index + 1` of it: a valid point, in the wrong place. */
async function replacePoint(file: string, section: number, index: number): Promise<void> {
  const bytes = await readFile(file);
  const offset = (await readZkeyInfo(file)).sections.get(section)!.offset + index * 64;
  bytes.copy(bytes, offset, offset + 64, offset + 128);
  await writeFile(file, bytes);
}

/** `ceremony audit DIR` with the auditor's pins (this ceremony's config and the development ptau's hash). */
async function pinnedAudit(dir: string, ...options: string[]): Promise<CliResult> {
  const pins = ['--config', fixture.auditorConfig(), '--ptau-hash', await devPtauHash()];
  return runCli(['audit', dir, '--no-queue-log', '--quiet', ...pins, ...options]);
}

function failed(report: AuditReport): string[] {
  return report.findings.filter((f) => !f.ok).map((f) => f.subject);
}

test('the nine circuits untouched pass (CLI, exit 0); CEREMONY_STAGE_TIMES=1 prints stage times', async () => {
  const nine = await finalisedCeremony();
  // Run from the checkout with no --config: its ceremony-data/ceremony.json is the auditor's, and pins every r1cs.
  const result = await runCli(
    ['audit', nine.dataDir, '--no-queue-log', '--quiet', '--ptau-hash', await devPtauHash()],
    {
      env: { CEREMONY_STAGE_TIMES: '1' },
    },
  );
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(
      '^manifest ok: 9 verifiers match the final keys; final/compiler\\.json \\(solc 0\\.8\\.\\d+ \\{.*\\}\\) and ' +
        'the 9 verifier sources are the ones the transcript commits, each the verifier of its final key$',
      'm',
    ),
  );
  // Where the beacon came from is not proven (no announcement), and the report says so.
  assert.match(result.stdout, /^beacon ok: NOT committed to in advance: the transcript announces no beacon/m);
  assert.match(result.stdout, /^ {2}\(each beacon as the transcript states it: the beacon finding above says/m);
  for (const stage of [
    /^stage-time audit: ptau hash \(its pin\) \d+ ms$/m,
    /^stage-time audit: ptau sections \d+ ms$/m,
    /^stage-time audit: {3}ptau sections: Lagrange sections \d+ ms$/m,
    /^stage-time audit: chain of transact42 \d+ ms$/m,
    /^stage-time audit transact42: key hashes \(file and sections\) \d+ ms$/m,
    /^stage-time audit transact42: contribution 0 against the r1cs and the ptau \d+ ms$/m,
    /^stage-time audit transact42: {3}contribution 0: key G2 MSM \d+ ms$/m,
    /^stage-time audit transact42: the final key against contribution 0 \(records, L and H sums, pairings\) \d+ ms$/m,
    /^stage-time audit transact42: keys between \(history, fixed sections, δ\) \d+ ms$/m,
    /^stage-time audit transact42: keys between: section hashes \d+ ms$/m,
  ])
    assert.match(result.stderr, stage);
});

test('one byte changed in a contribution zkey fails that circuit', async () => {
  const report = await tamperedCeremony(async (dir) => {
    const file = ceremonyPaths(dir).zkeyPath('transact21', 1);
    await flipByte(file, (await readZkeyInfo(file)).sections.get(SECTION.l)!.offset + 10);
  });
  assert.equal(report.ok, false);
  assert.deepEqual(
    failed(report).filter((s) => s !== 'manifest'),
    ['transact21'],
  );
});

test('one byte changed in contribution 0 fails that circuit', async () => {
  const report = await tamperedCeremony(async (dir) => {
    const file = ceremonyPaths(dir).zkeyPath('register', 0);
    await flipByte(file, (await readZkeyInfo(file)).sections.get(SECTION.a)!.offset + 3);
  });
  assert.deepEqual(
    failed(report).filter((s) => s !== 'manifest'),
    ['register'],
  );
});

test('one byte changed in a final zkey fails that circuit and the manifest check', async () => {
  const report = await tamperedCeremony(async (dir) => {
    const file = ceremonyPaths(dir).finalZkeyPath('transact21');
    await flipByte(file, (await readZkeyInfo(file)).sections.get(SECTION.h)!.offset + 100);
  });
  assert.deepEqual(failed(report), ['transact21', 'manifest']);
});

test('a zkey that cannot be read is reported as unreadable with the OS code; a deleted one as missing', async () => {
  const unreadable = await tamperedCeremony(async (dir) => {
    const file = ceremonyPaths(dir).zkeyPath('transact21', 2);
    await rm(file);
    await mkdir(file); // there, but not a file: reading it fails with EISDIR
  });
  const transact21 = unreadable.findings.find((f) => f.subject === 'transact21')!;
  assert.equal(transact21.ok, false);
  assert.match(
    transact21.summary,
    /^\[chain\.file_unreadable\] contribution 2 \(transact21_0002\.zkey\) cannot be read \(EISDIR\)$/,
  );
  assert.deepEqual(
    failed(unreadable).filter((s) => s !== 'manifest'),
    ['transact21'],
  );

  const missing = await tamperedCeremony(async (dir) => {
    await rm(ceremonyPaths(dir).zkeyPath('transact21', 2));
  });
  assert.match(
    missing.findings.find((f) => f.subject === 'transact21')!.summary,
    /^\[chain\.file_missing\] contribution 2 \(transact21_0002\.zkey\) is missing$/,
  );
});

test('one character changed in the transcript fails the transcript', async () => {
  const report = await tamperedCeremony(async (dir) => {
    await replaceOnce(ceremonyPaths(dir).transcriptPath, /"contributor":"bob"/, () => '"contributor":"bot"');
  });
  assert.equal(report.ok, false);
  assert.deepEqual(failed(report), ['transcript']);
});

test('one digit changed in the manifest fails the manifest', async () => {
  const report = await tamperedCeremony(async (dir) => {
    await replaceOnce(
      ceremonyPaths(dir).manifestPath,
      /"deltax2": "\d/,
      (m) => m.slice(0, -1) + (m.endsWith('1') ? '2' : '1'),
    );
  });
  assert.deepEqual(failed(report), ['manifest']);
  const cli = await pinnedAudit(copies.at(-1)!);
  assert.equal(cli.code, 1);
  assert.match(cli.stdout, /^manifest FAIL: /m);
  assert.match(cli.stdout, /^audit FAILED: 1 problem$/m);
});

/** Replaces one point of a circuit's key file, then rewrites the transcript entry `isEntry` picks to its new hash. */
function forgedKeyWithMatchingTranscript(
  circuit: string,
  index: number,
  section: number,
  point: number,
  isEntry: (entry: TranscriptEntry) => boolean,
  gap?: FinalKeyGap,
) {
  return tamperedCeremony(
    async (dir) => {
      const paths = ceremonyPaths(dir);
      const file = paths.zkeyPath(circuit, index);
      await replacePoint(file, section, point);
      const hashes = await hashKeyFile(file, 'the forged key');
      await rewriteTranscript(paths, (entry) => {
        if (isEntry(entry) && 'fileHash' in entry) Object.assign(entry, hashes);
      });
    },
    {},
    gap,
  );
}

/** Contribution 2 of transact21 with a replaced point of L, its transcript entry rewritten to match. */
const forgedLink = () =>
  forgedKeyWithMatchingTranscript(
    'transact21',
    2,
    SECTION.l,
    0,
    (entry) => entry.type === 'contribution' && entry.circuit === 'transact21' && entry.index === 2,
    { circuit: 'transact21' },
  );

test('a forged link is caught even when the transcript was rewritten to match it', async () => {
  // A key between, forged after the fact: the final key still descends from every contribution, and
  // the default (which reads only the final key's L and H) passes it, saying it did not check this;
  // --every-link (`chainCheck: 'every-link'`, this report) refuses it.
  const report = await forgedLink();
  assert.deepEqual(
    failed(report).filter((s) => s !== 'manifest'),
    ['transact21'],
  );
  assert.match(report.findings.find((f) => f.subject === 'transact21')!.summary, /contribution\.l_section_invalid/);
});

test('the default audit is the final-key check; --every-link still catches a forged key between', async () => {
  await forgedLink();
  const forged = copies.at(-1)!;
  const byDefault = await pinnedAudit(forged, '--json');
  assert.equal(byDefault.code, 0, byDefault.stdout + byDefault.stderr);
  const report = JSON.parse(byDefault.stdout) as AuditReport;
  assert.deepEqual(
    report.circuits.map((c) => c.check),
    ['final-key', 'final-key'],
  );
  assert.match(
    report.findings.find((f) => f.subject === 'transact21')!.summary,
    new RegExp(
      '^2 contributions \\+ beacon: final-key check \\(the default\\): the final key against contribution 0: ' +
        '.*so it descends from every recorded contribution; the 2 keys between: .*their L and H NOT checked',
    ),
  );
  const named = await pinnedAudit(forged, '--final-key');
  assert.equal(named.code, 0, 'the default, named: scripts that pass --final-key keep working');
  const everyLink = await pinnedAudit(forged, '--every-link');
  assert.equal(everyLink.code, 1, everyLink.stdout + everyLink.stderr);
  assert.match(everyLink.stdout, /^transact21 FAIL: \[contribution\.l_section_invalid\] /m);
  assert.match(everyLink.stdout, /^register ok: 2 contributions \+ beacon verified link by link \(--every-link\)/m);
});

test('a contribution whose A section changed is refused by its link, its transcript rewritten to match', async () => {
  // The link compares fixed sections by the section hashes the audit computed from both files.
  const report = await forgedKeyWithMatchingTranscript('transact21', 2, SECTION.a, 0, (entry) => {
    return entry.type === 'contribution' && entry.circuit === 'transact21' && entry.index === 2;
  });
  assert.deepEqual(
    failed(report).filter((s) => s !== 'manifest'),
    ['transact21'],
  );
  assert.match(report.findings.find((f) => f.subject === 'transact21')!.summary, /contribution\.header_mismatch/);
});

test(
  'a contribution 0 with a replaced point, its transcript hash rewritten ' + 'to match, is refused naming the section',
  async () => {
    const report = await forgedKeyWithMatchingTranscript(
      'register',
      0,
      SECTION.a,
      2,
      (entry) => entry.type === 'init' && entry.circuit === 'register',
    );
    assert.deepEqual(
      failed(report).filter((s) => s !== 'manifest'),
      ['register'],
    );
    assert.match(report.findings.find((f) => f.subject === 'register')!.summary, /audit\.initial_key_mismatch.*: A /);
  },
);

test("an init entry whose circuit hash is not contribution 0's is refused, the transcript made to match", async () => {
  // Every receipt check of the chain holds its keys to this hash: a wrong one would fail them all.
  // Contribution 0 is untouched: without its memo, the hash compared is the one its check computes.
  const report = await tamperedCeremony(
    async (dir) =>
      rewriteTranscript(ceremonyPaths(dir), (entry) => {
        if (entry.type === 'init' && entry.circuit === 'register') entry.circuitHash = 'cd'.repeat(64);
      }),
    { initialKeyMemoDir: undefined },
  );
  assert.deepEqual(
    failed(report).filter((s) => s !== 'manifest'),
    ['register'],
  );
  assert.match(
    report.findings.find((f) => f.subject === 'register')!.summary,
    /transcript\.corrupt.*circuit hash for contribution 0 is not the circuit hash of the r1cs/,
  );
});

test('a beacon hashed more times than the auditor allows fails its chain; an exponent past 63 is none', async () => {
  // The transcript names the exponent, and the audit would hash 2^N times before its verdict.
  const announcing = (iterationsExp: number) => async (dir: string) =>
    rewriteTranscript(ceremonyPaths(dir), (entry) => {
      if (entry.type === 'beacon' && entry.circuit === 'register') entry.iterationsExp = iterationsExp;
    });
  const summaryOf = (report: AuditReport, subject: string): string =>
    report.findings.find((f) => f.subject === subject)!.summary;
  const costly = await tamperedCeremony(announcing(40));
  assert.deepEqual(failed(costly), ['register', 'manifest']);
  assert.match(
    summaryOf(costly, 'register'),
    /audit\.beacon_too_costly.*2\^40 times, more than the 2\^32 .*--max-beacon-iterations 40/,
  );
  // Allowed to spend it, the audit goes on to the link, whose record names 2^10: not the announced beacon.
  const allowed = await tamperedCeremony(announcing(40), { maxBeaconIterationsExp: 40 });
  assert.match(summaryOf(allowed, 'register'), /finalise\.beacon_mismatch/);
  const noBeacon = await tamperedCeremony(announcing(200));
  assert.deepEqual(failed(noBeacon), ['transcript']);
  assert.match(summaryOf(noBeacon, 'transcript'), /transcript\.corrupt.*iterationsExp/);
});

test('a replaced point in the final key is caught against the combination carried along the chain', async () => {
  const report = await tamperedCeremony(async (dir) => {
    const paths = ceremonyPaths(dir);
    const file = paths.finalZkeyPath('transact21');
    await replacePoint(file, SECTION.h, 5);
    const hashes = await hashKeyFile(file, 'the forged key');
    await rewriteTranscript(paths, (entry) => {
      if (entry.type === 'beacon' && entry.circuit === 'transact21') Object.assign(entry, hashes);
    });
  });
  assert.deepEqual(failed(report), ['transact21', 'manifest']);
  assert.match(report.findings.find((f) => f.subject === 'transact21')!.summary, /contribution\.h_section_invalid/);
});

test('a final key made with another beacon than the transcript announces is refused', async () => {
  const report = await tamperedCeremony(async (dir) => {
    const paths = ceremonyPaths(dir);
    const file = paths.finalZkeyPath('register');
    const otherBeacon = 'aa'.repeat(32);
    await rm(file);
    // Same iteration count as the fixture's beacon: only the beacon value differs.
    assert.ok(
      await snarkjs.zKey.beacon(paths.zkeyPath('register', 2), file, 'forged', otherBeacon, 10),
      'snarkjs made no final key',
    );
    const hashes = await hashKeyFile(file, 'the forged key');
    await rewriteTranscript(paths, (entry) => {
      if (entry.type === 'beacon' && entry.circuit === 'register') Object.assign(entry, hashes);
    });
  });
  assert.deepEqual(failed(report), ['register', 'manifest']);
  assert.match(report.findings.find((f) => f.subject === 'register')!.summary, /finalise\.beacon_mismatch/);
});

/** The published transcript cut before its first line that `drop` picks (a publication cut short). */
async function cutTranscript(dir: string, drop: (entry: TranscriptEntry) => boolean): Promise<void> {
  const file = ceremonyPaths(dir).transcriptPath;
  const lines = (await readFile(file, 'utf8')).trim().split('\n');
  const at = lines.findIndex((line) => drop(JSON.parse(line)));
  assert.ok(at > 0, 'nothing to cut');
  await writeFile(file, `${lines.slice(0, at).join('\n')}\n`);
}

test('a transcript cut before `finalised` fails with audit.not_finalised, exit 1', async () => {
  const report = await tamperedCeremony((dir) => cutTranscript(dir, (e) => e.type === 'finalised'));
  assert.equal(report.ok, false);
  assert.deepEqual(failed(report), ['finalisation']);
  const finding = report.findings.find((f) => f.subject === 'finalisation')!;
  assert.equal(finding.code, 'audit.not_finalised');
  assert.match(finding.summary, /the transcript has no `finalised` entry/);
  assert.doesNotMatch(finding.summary, /no final key/);
  const cli = await pinnedAudit(copies.at(-1)!);
  assert.equal(cli.code, 1);
  assert.match(cli.stdout, /^finalisation FAIL: \[audit\.not_finalised\] the ceremony is not finished: /m);
});

test('a transcript cut before the beacon lines names every circuit without a final key', async () => {
  const report = await tamperedCeremony((dir) => cutTranscript(dir, (e) => e.type === 'beacon'));
  assert.equal(report.ok, false);
  const finding = report.findings.find((f) => f.subject === 'finalisation')!;
  assert.equal(finding.code, 'audit.not_finalised');
  assert.match(
    finding.summary,
    new RegExp(`no final key \\(beacon\\) for ${fixture.published.circuits.map((c) => c.name).join(', ')}`),
  );
  // With --in-progress the same folder is a running ceremony: it passes, and its last line says it is not finished.
  const cli = await pinnedAudit(copies.at(-1)!, '--in-progress');
  assert.equal(cli.code, 0, cli.stdout + cli.stderr);
  assert.match(
    cli.stdout.trim().split('\n').at(-1)!,
    /^audit passed; the ceremony is in progress, NOT finished: no final key/,
  );
});

test('a key whose whole-file hash the transcript rewrote but not its section hashes fails that circuit', async () => {
  const report = await tamperedCeremony(async (dir) => {
    const paths = ceremonyPaths(dir);
    const file = paths.zkeyPath('register', 1);
    await replacePoint(file, SECTION.l, 3);
    const { fileHash } = await hashKeyFile(file, 'the forged key');
    await rewriteTranscript(paths, (entry) => {
      if (entry.type === 'contribution' && entry.circuit === 'register' && entry.index === 1) entry.fileHash = fileHash;
    });
  });
  const finding = report.findings.find((f) => f.subject === 'register')!;
  assert.equal(finding.code, 'transcript.section_hash_mismatch');
  assert.match(finding.summary, /contribution 1 \(register_0001\.zkey\): the transcript's hash of its section 8 /);
});

test('the audit prints the hash of the last transcript entry as the ceremony identifier', async () => {
  const last = JSON.parse(
    (await readFile(ceremonyPaths(fixture.published.dataDir).transcriptPath, 'utf8')).trim().split('\n').at(-1)!,
  );
  const auditorConfig = fixture.auditorConfig();
  const report = await auditCeremony(fixture.published.dataDir, undefined, {
    auditorConfig,
    noQueueLog: true,
    ptauHash: await devPtauHash(),
  });
  assert.deepEqual(report.identifier, { hash: last.hash, seq: last.seq, type: 'finalised' });
  const cli = await pinnedAudit(fixture.published.dataDir);
  assert.match(cli.stdout, new RegExp(`^ceremony identifier: ${last.hash}$`, 'm'));
  assert.match(
    report.findings.find((f) => f.subject === 'transcript')!.summary,
    /every key committed section by section \(format 2\)/,
  );
});
