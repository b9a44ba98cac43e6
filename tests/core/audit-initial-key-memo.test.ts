/**
 * A contribution 0 checked against its r1cs and ptau, remembered on the auditor's machine
 * (verified-initial-key-memo.ts): a second audit of the same files skips that check and says so, per
 * circuit; a record is never trusted for another contribution 0 (other bytes, so another hash), for
 * another r1cs or ptau, another version of the check, or when malformed; `recheck` (and its earlier
 * name `recheckPtau`) checks again. Each audit is of the (cached) two-circuit ceremony.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditCeremony, type AuditOptions, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { INITIAL_KEY_CHECK_VERSION } from '../../core/audit/check-initial-key.ts';
import { defaultInitialKeyMemoDir, readInitialKeyMemo } from '../../core/audit/verified-initial-key-memo.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { readZkeyInfo, SECTION } from '../../core/zkey/zkey-file.ts';
import {
  auditorConfigOf,
  copyCeremony,
  devPtauHash,
  finalisedCeremony,
  TWO_CIRCUITS,
  type FinalisedCeremony,
} from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { runCli } from '../helpers/run-cli.ts';

let published: FinalisedCeremony;
const scratch: string[] = [];

before(async () => {
  published = await finalisedCeremony(TWO_CIRCUITS);
});

after(async () => {
  await closeMultiExp();
  await cleanUp(...scratch);
});

async function memoDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'initial-key-memo-'));
  scratch.push(dir);
  return path.join(dir, 'ceremony', 'verified-initial-key');
}

async function audit(
  initialKeyMemoDir: string,
  { dataDir = published.dataDir, ...options }: Partial<AuditOptions> & { dataDir?: string } = {},
): Promise<AuditReport> {
  return auditCeremony(dataDir, undefined, {
    auditorConfig: auditorConfigOf(published.dataDir),
    ptauHash: await devPtauHash(),
    noQueueLog: true, // made by the CLI, without the coordinator's lobby
    initialKeyMemoDir,
    ...options,
  });
}

async function passing(dir: string, options: Partial<AuditOptions> & { dataDir?: string } = {}): Promise<AuditReport> {
  const report = await audit(dir, options);
  assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
  return report;
}

const finding = (report: AuditReport, circuit: string): string =>
  report.findings.find((f) => f.subject === circuit)!.summary;
const remembered = (report: AuditReport): Array<string | undefined> =>
  report.circuits.map((circuit) => circuit.initialKeyRemembered?.checkedAt);

/** The records, one a circuit, by their file names. */
async function records(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).sort();
  assert.equal(names.length, TWO_CIRCUITS.length);
  for (const name of names) assert.match(name, new RegExp(`^[0-9a-f]{128}-v${INITIAL_KEY_CHECK_VERSION}\\.json$`));
  return names.map((name) => path.join(dir, name));
}

test('a second audit of the same files remembers each contribution 0 and says so; recheck checks again', async () => {
  const dir = await memoDir();
  const first = await passing(dir);
  assert.deepEqual(remembered(first), [undefined, undefined]);
  assert.match(finding(first, 'transact21'), /; contribution 0: checked against the r1cs and the ptau, remembered on /);
  const files = await records(dir);
  assert.equal((await stat(files[0]!)).mode & 0o777, 0o600);
  assert.equal((await stat(dir)).mode & 0o777, 0o700);
  const record = JSON.parse(await readFile(files[0]!, 'utf8'));
  assert.equal(record.ptauHash, await devPtauHash());
  assert.equal(record.checkVersion, INITIAL_KEY_CHECK_VERSION);
  const r1csHashes = first.circuits.map((circuit) => circuit.r1cs.blake2b512);
  assert.ok(r1csHashes.includes(record.r1csHash), 'keyed by the r1cs hash the audit computed');

  const second = await passing(dir);
  assert.ok(remembered(second).every((checkedAt) => checkedAt !== undefined));
  assert.match(
    finding(second, 'transact21'),
    new RegExp(
      `; contribution 0: remembered, checked on [^ ]+ \\(check version ${INITIAL_KEY_CHECK_VERSION}\\) against ` +
        'the same r1cs and ptau by this machine, not checked again \\(--recheck checks it again\\)$',
    ),
  );

  for (const recheck of [{ recheck: true }, { recheckPtau: true }]) {
    const rechecked = await passing(dir, recheck);
    assert.deepEqual(remembered(rechecked), [undefined, undefined], JSON.stringify(recheck));
    assert.match(finding(rechecked, 'register'), /; contribution 0: checked against the r1cs and the ptau, remembered/);
  }
  assert.notEqual(JSON.parse(await readFile(files[0]!, 'utf8')).checkedAt, record.checkedAt, 'written anew');
});

test('a contribution 0 with other bytes (its transcript rewritten to match) is checked again and fails', async () => {
  const dir = await memoDir();
  const dataDir = await copyCeremony(published.dataDir);
  scratch.push(dataDir);
  await passing(dir, { dataDir });
  const before = await Promise.all((await records(dir)).map((file) => readFile(file, 'utf8')));
  const paths = ceremonyPaths(dataDir);
  const file = paths.zkeyPath('register', 0);
  // Point 2 of section A replaced with point 3: a valid point, in the wrong place.
  const bytes = await readFile(file);
  const offset = (await readZkeyInfo(file)).sections.get(SECTION.a)!.offset + 2 * 64;
  bytes.copy(bytes, offset, offset + 64, offset + 128);
  await writeFile(file, bytes);
  const hashes = await hashKeyFile(file, 'the forged key');
  await rewriteTranscript(dataDir, (entries) => {
    for (const entry of entries)
      if (entry.type === 'init' && entry.circuit === 'register') Object.assign(entry, hashes);
    return entries;
  });
  const report = await audit(dir, { dataDir });
  assert.equal(report.ok, false);
  assert.match(finding(report, 'register'), /audit\.initial_key_mismatch.*: A /);
  assert.equal(report.circuits.find((c) => c.name === 'register')!.initialKeyRemembered, undefined);
  assert.notEqual(report.circuits.find((c) => c.name === 'transact21')!.initialKeyRemembered, undefined);
  const after = await Promise.all((await records(dir)).map((f) => readFile(f, 'utf8')));
  assert.deepEqual(after, before, 'nothing remembered of the failed check');
});

test('a record is not trusted for another r1cs, ptau or key, another check version, or when malformed', async () => {
  const dir = await memoDir();
  await passing(dir);
  const files = await records(dir);
  const goods: Array<Record<string, string>> = await Promise.all(
    files.map(async (file) => JSON.parse(await readFile(file, 'utf8'))),
  );
  const notTrusted = async (why: string, change: (good: Record<string, unknown>) => string) => {
    await Promise.all(files.map((file, i) => writeFile(file, change(goods[i]!))));
    const report = await passing(dir);
    assert.deepEqual(remembered(report), [undefined, undefined], `${why}: a record was trusted`);
  };
  const other = 'ab'.repeat(64);
  await notTrusted('another r1cs', (good) => JSON.stringify({ ...good, r1csHash: other }));
  await notTrusted('another ptau', (good) => JSON.stringify({ ...good, ptauHash: other }));
  await notTrusted('another key', (good) => JSON.stringify({ ...good, keyHash: other }));
  await notTrusted('another version', (good) =>
    JSON.stringify({ ...good, checkVersion: INITIAL_KEY_CHECK_VERSION + 1 }),
  );
  await notTrusted('malformed', () => '{"format":"ceremony-verified-initial-key"');
  await notTrusted('extra fields', (good) => JSON.stringify({ ...good, trusted: true }));
  // Checked again each time, and remembered anew: a good record is trusted once more.
  assert.ok(remembered(await passing(dir)).every((checkedAt) => checkedAt !== undefined));
  // Looked up for another r1cs or ptau (another pin), the good records are not found: their names are keyed by both.
  const { r1csHash, ptauHash, keyHash } = goods[0] as { r1csHash: string; ptauHash: string; keyHash: string };
  assert.ok(await readInitialKeyMemo(dir, { r1csHash, ptauHash, keyHash }));
  assert.equal(await readInitialKeyMemo(dir, { r1csHash, ptauHash: other, keyHash }), undefined);
  assert.equal(await readInitialKeyMemo(dir, { r1csHash: other, ptauHash, keyHash }), undefined);
});

test('the CLI remembers contribution 0 in $XDG_CACHE_HOME or --initial-key-memo-dir; --recheck', async () => {
  const cacheHome = path.dirname(path.dirname(await memoDir()));
  const run = async (...options: string[]) => {
    const result = await runCli(
      ['audit', published.dataDir, '--config', auditorConfigOf(published.dataDir), '--no-queue-log', '--quiet'].concat([
        '--ptau-hash',
        await devPtauHash(),
        ...options,
      ]),
      { env: { XDG_CACHE_HOME: cacheHome } },
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    return result.stdout;
  };
  assert.match(await run(), /^transact21 ok: .*; contribution 0: checked against the r1cs and the ptau, remembered/m);
  await records(defaultInitialKeyMemoDir({ XDG_CACHE_HOME: cacheHome }));
  assert.match(await run(), /^transact21 ok: .*; contribution 0: remembered, checked on /m);
  assert.match(await run('--recheck'), /^transact21 ok: .*; contribution 0: checked against/m);
  const elsewhere = await memoDir();
  assert.match(await run('--initial-key-memo-dir', elsewhere), /^register ok: .*; contribution 0: checked against/m);
  await records(elsewhere);
  const json = JSON.parse(await run('--json'));
  assert.equal(json.circuits[0].initialKeyRemembered.checkVersion, INITIAL_KEY_CHECK_VERSION);
});
