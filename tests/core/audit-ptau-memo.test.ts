/**
 * A verified ptau remembered on the auditor's machine (verified-ptau-memo.ts): the first audit
 * checks the ptau's sections and writes the memo (atomically, mode 0600, named by the ptau's hash
 * and the check's version); a second audit of the same ptau skips the check and says so; the memo
 * is never trusted for another file, another version of the check, other domains or a malformed
 * memo, and `recheckPtau` checks again. So is a contribution 0 checked against its r1cs and ptau
 * (verified-initial-key-memo.ts, the same record store): a second audit of the same files skips that
 * check and says so, per circuit; a record is never trusted for another contribution 0 (other bytes,
 * so another hash), another r1cs or ptau, another version of the check, or when malformed; `recheck`
 * (and its earlier name `recheckPtau`) checks again. Each audit is of the (cached) two-circuit ceremony.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditCeremony, type AuditOptions, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { PTAU_SECTIONS_CHECK_VERSION } from '../../core/audit/check-ptau-sections.ts';
import { INITIAL_KEY_CHECK_VERSION } from '../../core/audit/check-initial-key.ts';
import { defaultPtauMemoDir } from '../../core/audit/verified-ptau-memo.ts';
import { defaultInitialKeyMemoDir, readInitialKeyMemo } from '../../core/audit/verified-initial-key-memo.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { readZkeyInfo, SECTION } from '../../core/zkey/zkey-file.ts';
import { auditorConfigOf, copyCeremony, devPtauHash, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { runCli } from '../helpers/run-cli.ts';
import { twoCircuitCeremony } from '../helpers/two-circuit-ceremony.ts';

const fixture = twoCircuitCeremony();
const scratch = fixture.copies;

async function memoDir(kind = 'verified-ptau'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ptau-memo-'));
  scratch.push(dir);
  return path.join(dir, 'ceremony', kind);
}

/**
 * The file's memo folders for what a test is not about: a test of the ptau's memo remembers each
 * contribution 0 in one, a test of contribution 0's the ptau in the other. Each audit then checks
 * again only what its test is about, and the ptau's sections and contributions 0 are not checked in
 * every one of some thirty audits.
 */
let asides: Promise<{ ptau: string; initialKey: string }> | undefined;
const aside = () =>
  (asides ??= (async () => ({ ptau: await memoDir(), initialKey: await memoDir('verified-initial-key') }))());

type Options = Partial<AuditOptions> & { dataDir?: string };

/** The audit of the ceremony (or of `dataDir`), passing or not. */
async function auditReport(ptauMemoDir: string, { dataDir = fixture.published.dataDir, ...options }: Options = {}) {
  return auditCeremony(dataDir, undefined, {
    auditorConfig: auditorConfigOf(dataDir),
    ptauHash: await devPtauHash(),
    noQueueLog: true, // made by the CLI, without the coordinator's lobby
    ptauMemoDir,
    ...options,
  });
}

async function audit(ptauMemoDir: string, options: Options = {}): Promise<AuditReport> {
  const report = await auditReport(ptauMemoDir, { initialKeyMemoDir: (await aside()).initialKey, ...options });
  assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
  return report;
}

/** An audit that remembers contribution 0 in `dir` (the ptau in the file's folder aside), and passes. */
const passing = async (dir: string, options: Options = {}): Promise<AuditReport> =>
  audit((await aside()).ptau, { initialKeyMemoDir: dir, ...options });

const sectionsFinding = (report: AuditReport): string =>
  report.findings.find((f) => f.subject === 'ptau sections')!.summary;

async function memoFile(dir: string): Promise<string> {
  const names = await readdir(dir);
  assert.deepEqual(names, [`${await devPtauHash()}-v${PTAU_SECTIONS_CHECK_VERSION}.json`]);
  return path.join(dir, names[0]!);
}

test('a second audit on the same ptau skips its sections check and says so; the memo is private', async () => {
  const dir = await memoDir();
  const first = await audit(dir);
  assert.equal(first.ptau!.sectionsRemembered, undefined);
  assert.match(sectionsFinding(first), /; remembered on this machine, so a later audit on this ptau skips this check/);
  const file = await memoFile(dir);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.equal((await stat(dir)).mode & 0o777, 0o700);
  const memo = JSON.parse(await readFile(file, 'utf8'));
  assert.equal(memo.blake2b512, await devPtauHash());
  assert.equal(memo.checkVersion, PTAU_SECTIONS_CHECK_VERSION);

  const second = await audit(dir);
  assert.equal(second.ptau!.sectionsRemembered?.checkedAt, memo.checkedAt);
  assert.deepEqual(second.ptau!.sectionsChecked, first.ptau!.sectionsChecked);
  assert.match(sectionsFinding(second), /^remembered, not checked again: this machine checked this file .* on /);

  const rechecked = await audit(dir, { recheckPtau: true });
  assert.equal(rechecked.ptau!.sectionsRemembered, undefined);
  assert.match(sectionsFinding(rechecked), /; remembered on this machine/);
  assert.notEqual(JSON.parse(await readFile(file, 'utf8')).checkedAt, memo.checkedAt, 'written anew');
});

test('a memo is not trusted for another file, another check version, other domains, or when malformed', async () => {
  const dir = await memoDir();
  await audit(dir);
  const file = await memoFile(dir);
  const good = JSON.parse(await readFile(file, 'utf8'));
  const notTrusted = async (why: string, write: () => Promise<void>) => {
    await write();
    const report = await audit(dir);
    assert.equal(report.ptau!.sectionsRemembered, undefined, `${why}: the memo was trusted`);
    // Checked again, it is remembered anew (with what a memo of the same file said besides): the
    // next case starts from a good memo.
    const domains: number[] = JSON.parse(await readFile(file, 'utf8')).domains;
    assert.ok(
      good.domains.every((k: number) => domains.includes(k)),
      `${why}: not remembered anew`,
    );
  };
  // Another ptau's memo, put in this one's name.
  await notTrusted('another file', () => writeFile(file, JSON.stringify({ ...good, blake2b512: 'ab'.repeat(64) })));
  // This ptau's memo, by another version of the check (its name, and then its content).
  await notTrusted('another version by name', async () => {
    await rename(file, file.replace(/-v\d+\.json$/, `-v${PTAU_SECTIONS_CHECK_VERSION + 1}.json`));
  });
  await notTrusted('another version by content', () =>
    writeFile(file, JSON.stringify({ ...good, checkVersion: PTAU_SECTIONS_CHECK_VERSION + 1 })),
  );
  // Checked for a smaller domain only.
  await notTrusted('other domains', () => writeFile(file, JSON.stringify({ ...good, domains: [1] })));
  await notTrusted('malformed', () => writeFile(file, '{"format":"ceremony-verified-ptau"'));
  await notTrusted('extra fields', () => writeFile(file, JSON.stringify({ ...good, trusted: true })));
});

test('a ptau swapped after the memo (other bytes, same name) fails its pin; the memo is not read', async () => {
  const dir = await memoDir();
  const dataDir = await copyCeremony(fixture.published.dataDir);
  scratch.push(dataDir);
  await audit(dir, { dataDir });
  const file = await memoFile(dir);
  const memo = await readFile(file, 'utf8');
  // The copy's ptau is a link to the cached one: replaced by a file of its bytes with the last one changed.
  const ptauPath = path.join(dataDir, JSON.parse(await readFile(auditorConfigOf(dataDir), 'utf8')).ptau);
  const bytes = await readFile(ptauPath);
  bytes[bytes.length - 1]! ^= 1;
  await unlink(ptauPath);
  await writeFile(ptauPath, bytes);
  const report = await auditCeremony(dataDir, undefined, {
    auditorConfig: auditorConfigOf(dataDir),
    ptauHash: await devPtauHash(),
    noQueueLog: true,
    ptauMemoDir: dir,
  });
  assert.equal(report.ok, false);
  const failed = report.findings.filter((f) => !f.ok);
  assert.deepEqual(
    failed.map((f) => [f.subject, f.code]),
    [['ptau', 'audit.ptau_hash_mismatch']],
  );
  assert.equal(
    report.findings.find((f) => f.subject === 'ptau sections'),
    undefined,
  );
  assert.equal(await readFile(file, 'utf8'), memo, 'the memo is left as it was');
});

test('without a memo folder nothing is remembered; the CLI keeps memos in $XDG_CACHE_HOME', async () => {
  const report = await auditCeremony(fixture.published.dataDir, undefined, {
    auditorConfig: fixture.auditorConfig(),
    ptauHash: await devPtauHash(),
    noQueueLog: true,
  });
  assert.equal(report.ok, true);
  assert.doesNotMatch(sectionsFinding(report), /remembered/);
  assert.equal(defaultPtauMemoDir({ XDG_CACHE_HOME: '/cache' }), path.join('/cache', 'ceremony', 'verified-ptau'));
  // A relative XDG_CACHE_HOME is ignored, as its specification says.
  assert.match(defaultPtauMemoDir({ XDG_CACHE_HOME: 'cache' }), /[/\\]\.cache[/\\]ceremony[/\\]verified-ptau$/);
});

test('the CLI: a second run says the ptau was remembered; --ptau-memo-dir; what --final-key checks', async () => {
  const cacheHome = path.dirname(path.dirname(await memoDir()));
  const run = async (...options: string[]) =>
    runCli(
      [
        'audit',
        fixture.published.dataDir,
        '--config',
        fixture.auditorConfig(),
        '--no-queue-log',
        '--quiet',
        ...options,
      ],
      {
        env: { XDG_CACHE_HOME: cacheHome },
      },
    );
  const pin = ['--ptau-hash', await devPtauHash()];
  const first = await run(...pin, '--final-key');
  assert.equal(first.code, 0, first.stdout + first.stderr);
  assert.match(first.stdout, /^ptau sections ok: .*; remembered on this machine/m);
  assert.match(
    first.stdout,
    /^transact21 ok: 2 contributions \+ beacon: final-key check \(the default\): the final key against contribution 0/m,
  );
  assert.doesNotMatch(first.stdout, /\(remembered: /);
  await memoFile(path.join(cacheHome, 'ceremony', 'verified-ptau'));
  const second = await run(...pin, '--every-link');
  assert.equal(second.code, 0, second.stdout + second.stderr);
  assert.match(second.stdout, /^ptau sections ok: remembered, not checked again: /m);
  assert.match(second.stdout, /^ {2}\(remembered: checked by this machine on .*--recheck-ptau checks again\)$/m);
  assert.match(second.stdout, /^transact21 ok: 2 contributions \+ beacon verified link by link/m);
  const elsewhere = await memoDir();
  const placed = await run(...pin, '--ptau-memo-dir', elsewhere);
  assert.equal(placed.code, 0, placed.stdout + placed.stderr);
  assert.match(placed.stdout, /^ptau sections ok: .*; remembered on this machine/m, "not the cache home's memo");
  await memoFile(elsewhere);
  const both = await run(...pin, '--final-key', '--every-link');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--final-key.*cannot be used with.*--every-link/);
});

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
  const dir = await memoDir('verified-initial-key');
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
  const dir = await memoDir('verified-initial-key');
  const dataDir = await copyCeremony(fixture.published.dataDir);
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
  const report = await auditReport((await aside()).ptau, { initialKeyMemoDir: dir, dataDir });
  assert.equal(report.ok, false);
  assert.match(finding(report, 'register'), /audit\.initial_key_mismatch.*: A /);
  assert.equal(report.circuits.find((c) => c.name === 'register')!.initialKeyRemembered, undefined);
  assert.notEqual(report.circuits.find((c) => c.name === 'transact21')!.initialKeyRemembered, undefined);
  const after = await Promise.all((await records(dir)).map((f) => readFile(f, 'utf8')));
  assert.deepEqual(after, before, 'nothing remembered of the failed check');
});

test('a record is not trusted for another r1cs, ptau or key, another check version, or when malformed', async () => {
  const dir = await memoDir('verified-initial-key');
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
  const cacheHome = path.dirname(path.dirname(await memoDir('verified-initial-key')));
  const run = async (...options: string[]) => {
    const result = await runCli(
      ['audit', fixture.published.dataDir, '--config', fixture.auditorConfig(), '--no-queue-log', '--quiet'].concat([
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
  const elsewhere = await memoDir('verified-initial-key');
  assert.match(await run('--initial-key-memo-dir', elsewhere), /^register ok: .*; contribution 0: checked against/m);
  await records(elsewhere);
  const json = JSON.parse(await run('--json'));
  assert.equal(json.circuits[0].initialKeyRemembered.checkVersion, INITIAL_KEY_CHECK_VERSION);
});
