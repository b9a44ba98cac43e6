/**
 * A verified ptau remembered on the auditor's machine (verified-ptau-memo.ts): the first audit
 * checks the ptau's sections and writes the memo (atomically, mode 0600, named by the ptau's hash
 * and the check's version); a second audit of the same ptau skips the check and says so; the memo
 * is never trusted for another file, another version of the check, other domains or a malformed
 * memo, and `recheckPtau` checks again. Each audit is of the (cached) two-circuit ceremony.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditCeremony, type AuditOptions, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { PTAU_SECTIONS_CHECK_VERSION } from '../../core/audit/check-ptau-sections.ts';
import { defaultPtauMemoDir } from '../../core/audit/verified-ptau-memo.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import {
  auditorConfigOf,
  copyCeremony,
  devPtauHash,
  finalisedCeremony,
  TWO_CIRCUITS,
  type FinalisedCeremony,
} from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
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
  const dir = await mkdtemp(path.join(tmpdir(), 'ptau-memo-'));
  scratch.push(dir);
  return path.join(dir, 'ceremony', 'verified-ptau');
}

async function audit(
  ptauMemoDir: string,
  { dataDir = published.dataDir, ...options }: Partial<AuditOptions> & { dataDir?: string } = {},
): Promise<AuditReport> {
  const report = await auditCeremony(dataDir, undefined, {
    auditorConfig: auditorConfigOf(dataDir),
    ptauHash: await devPtauHash(),
    noQueueLog: true, // made by the CLI, without the coordinator's lobby
    ptauMemoDir,
    ...options,
  });
  assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
  return report;
}

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
  const dataDir = await copyCeremony(published.dataDir);
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
  const report = await auditCeremony(published.dataDir, undefined, {
    auditorConfig: auditorConfigOf(published.dataDir),
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
        published.dataDir,
        '--config',
        auditorConfigOf(published.dataDir),
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
    /^transact21 ok: 2 contributions \+ beacon: --final-key: the final key checked against contribution 0/m,
  );
  assert.doesNotMatch(first.stdout, /\(remembered: /);
  await memoFile(path.join(cacheHome, 'ceremony', 'verified-ptau'));
  const second = await run(...pin);
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
