/**
 * `ceremony publish`: exactly the allow-listed public files reach the folder or tarball (planted
 * private and stray files never do), SHA256SUMS verifies with sha256sum, `ceremony audit` passes
 * on the result, an existing OUT is refused, a tampered link is refused with nothing left behind,
 * the staging folder of a killed publish is removed by the next one (a running one's is not),
 * and a publication without the ptau records it so that the audit names what is missing and
 * accepts the right file (only) through --ptau. The coordinator's receipt public key is published
 * when the coordinator wrote it, and never a private key in its place.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { promisify } from 'node:util';
import { cp, mkdir, mkdtemp, open, readdir, readFile, rm, writeFile, copyFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  auditorConfigOf,
  copyCeremony,
  devPtauHash,
  finalisedCeremony,
  TWO_CIRCUITS,
} from '../fixtures/ceremony-fixture.ts';
import { runCli } from '../helpers/run-cli.ts';
import { processAuditMemos } from '../helpers/audit-memos.ts';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { publicFileList } from '../../core/publish/public-file-list.ts';
import { writeReceiptPublicKey } from '../../core/receipts/receipt-public-key-file.ts';
import { listFiles } from '../helpers/list-files.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { startLockHolder } from '../helpers/lock-holder.ts';

const run = promisify(execFile);
const PLANTED = 'PLANTED-PRIVATE-CONTENT-7f3a';
const CIRCUITS = TWO_CIRCUITS;
let dataDir: string;
let work: string;
let ptauFile: string;

const EXPECTED = [
  'SHA256SUMS',
  'ceremony.json',
  ...CIRCUITS.flatMap((c) => [0, 1, 2].map((i) => `chains/${c}/${c}_000${i}.zkey`)),
  'circuits/lib/mix-chain.circom',
  ...CIRCUITS.flatMap((c) => [`circuits/${c}.circom`, `circuits/${c}.r1cs`]),
  'final/VerifierRegister.sol',
  'final/VerifierTransact21.sol',
  'final/compiler.json',
  'final/manifest.json',
  ...CIRCUITS.flatMap((c) => [`final/${c}.vkey.json`, `final/${c}.zkey`]),
  'ptau/dev-pot10-insecure.ptau',
  'transcript/transcript.jsonl',
].sort();

async function assertNothingPlanted(dir: string): Promise<void> {
  for (const file of await listFiles(dir)) {
    assert.ok(!(await readFile(path.join(dir, file))).includes(PLANTED), `${file} carries planted private content`);
  }
}

async function assertChecksumsVerify(dir: string): Promise<void> {
  const { stdout } = await run('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: dir });
  const checked = stdout
    .trim()
    .split('\n')
    .map((line) => line.replace(/: OK$/, ''));
  assert.deepEqual(
    checked.sort(),
    (await listFiles(dir)).filter((f) => f !== 'SHA256SUMS'),
    'SHA256SUMS covers every other file',
  );
}

async function assertNoLeftovers(parent: string): Promise<void> {
  assert.deepEqual(
    (await readdir(parent)).filter((name) => name.includes('.publishing-')),
    [],
    'no temporary folder left behind',
  );
}

before(async () => {
  // A private copy of the cached finalised ceremony of two circuits (two contributions each).
  dataDir = await copyCeremony((await finalisedCeremony(CIRCUITS)).dataDir);
  ptauFile = (await loadCeremonyConfig(dataDir)).ptauPath;
  // What a running coordinator and careless hands leave in a data folder.
  await mkdir(path.join(dataDir, 'state'), { recursive: true });
  await writeFile(path.join(dataDir, 'state', 'receipt-key.pem'), `-----BEGIN PRIVATE KEY-----\n${PLANTED}\n`);
  await writeFile(path.join(dataDir, 'state', 'coordinator.sqlite'), PLANTED);
  await mkdir(path.join(dataDir, 'uploads', 'register'), { recursive: true });
  await writeFile(path.join(dataDir, 'uploads', 'register', 'a1b2c3'), PLANTED);
  await writeFile(path.join(dataDir, 'chains', 'register', 'notes.txt'), PLANTED);
  await copyFile(
    path.join(dataDir, 'chains', 'register', 'register_0002.zkey'),
    path.join(dataDir, 'chains', 'register', 'register_0003.zkey'),
  ); // an orphan beyond the head
  await writeFile(path.join(dataDir, 'secret.txt'), PLANTED);
  await writeFile(path.join(dataDir, 'final', 'draft-announcement.txt'), PLANTED);
  await writeFile(path.join(dataDir, 'circuits', 'scratch.circom'), `// ${PLANTED}`);
  work = await mkdtemp(path.join(tmpdir(), 'publish-test-'));
});

after(() => cleanUp(dataDir, work));

describe('publish to a folder', () => {
  const out = () => path.join(work, 'published');

  test('exactly the public files, checksums that verify, nothing planted', async () => {
    const result = await runCli(['publish', dataDir, out()]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^published ${EXPECTED.length} files`));
    assert.deepEqual(await listFiles(out()), EXPECTED);
    await assertNothingPlanted(out());
    await assertChecksumsVerify(out());
    await assertNoLeftovers(work);
  });

  test('`ceremony audit OUT` passes on it', async () => {
    const result = await runCli([
      ...['audit', out(), '--no-queue-log', '--config', auditorConfigOf(dataDir), '--quiet'],
      ...['--ptau-hash', await devPtauHash()],
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^audit passed$/m);
  });

  test('an existing OUT is refused and left as it is, also an empty folder', async () => {
    const before = await listFiles(out());
    const again = await runCli(['publish', dataDir, out()]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error \[publish\.out_exists\]: /m);
    assert.deepEqual(await listFiles(out()), before);
    const empty = path.join(work, 'empty');
    await mkdir(empty);
    assert.equal((await runCli(['publish', dataDir, empty])).code, 1);
    assert.deepEqual(await readdir(empty), []);
    await assertNoLeftovers(work);
  });

  test('a killed publish’s staging folder is removed by the next publish to OUT; a live one is kept', async () => {
    // A publish killed mid-copy (Ctrl-C, SIGKILL) leaves its staging folder and its owner's lock file.
    const dead = path.join(work, '.after-a-kill.publishing-4242-abc123');
    await mkdir(path.join(dead, 'chains'), { recursive: true });
    await writeFile(path.join(dead, 'chains', 'register_0001.zkey'), 'half a key');
    await (await startLockHolder(`${dead}.owner`, { note: false })).kill();
    // One of a publish still running in another process, whatever pid its name says (another
    // container's process may carry any, this machine's included).
    const running = path.join(work, `.after-a-kill.publishing-${process.pid}-def456`);
    await mkdir(running);
    const owner = await startLockHolder(`${running}.owner`, { note: false });
    try {
      const result = await runCli(['publish', dataDir, path.join(work, 'after-a-kill')]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /removed 1 staging folder an interrupted publish left/);
      await assert.rejects(stat(dead), { code: 'ENOENT' }, 'the dead publish’s staging folder is gone');
      assert.deepEqual(
        (await readdir(work)).filter((name) => name.includes('.publishing-')).sort(),
        [path.basename(running), `${path.basename(running)}.owner`],
        'a running publish’s staging folder and lock are left alone; the dead one’s lock is gone with it',
      );
      assert.deepEqual(await listFiles(path.join(work, 'after-a-kill')), EXPECTED);
    } finally {
      await owner.release();
      for (const leftover of [running, `${running}.owner`]) await rm(leftover, { recursive: true, force: true });
    }
    await assertNoLeftovers(work);
  });

  test('a link that is not the file the transcript records is refused, and nothing is left behind', async () => {
    const tampered = await copyCeremony(dataDir);
    try {
      const handle = await open(path.join(tampered, 'chains', 'transact21', 'transact21_0001.zkey'), 'r+');
      await handle.write(Buffer.from([0xff]), 0, 1, 200);
      await handle.close();
      const target = path.join(work, 'tampered');
      const result = await runCli(['publish', tampered, target]);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        new RegExp(
          '^error \\[chain\\.file_hash_mismatch\\]: ' +
            'chains\\/transact21\\/transact21_0001\\.zkey is not the file the transcript records',
          'm',
        ),
      );
      await assert.rejects(stat(target), { code: 'ENOENT' });
      await assertNoLeftovers(work);
    } finally {
      await rm(tampered, { recursive: true, force: true });
    }
  });
});

describe('publish to a tarball', () => {
  test('one folder named after it, the same files; extracted, checksums verify and the audit passes', async () => {
    const tarball = path.join(work, 'ceremony-public.tar.gz');
    const result = await runCli(['publish', dataDir, tarball]);
    assert.equal(result.code, 0, result.stderr);
    const { stdout: listing } = await run('tar', ['-tzf', tarball]);
    const entries = listing.trim().split('\n');
    assert.ok(
      entries.every((e) => e.startsWith('ceremony-public/')),
      listing,
    );
    const extracted = path.join(work, 'extracted');
    await mkdir(extracted);
    await run('tar', ['-xzf', tarball, '-C', extracted]);
    assert.deepEqual(await readdir(extracted), ['ceremony-public']);
    const root = path.join(extracted, 'ceremony-public');
    assert.deepEqual(await listFiles(root), EXPECTED);
    await assertNothingPlanted(root);
    await assertChecksumsVerify(root);
    // With the memos of the commands before it: the ptau and contributions 0 they checked are not checked again.
    const report = await auditCeremony(root, undefined, {
      noQueueLog: true,
      auditorConfig: auditorConfigOf(dataDir),
      ptauHash: await devPtauHash(),
      ...processAuditMemos(),
    });
    assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
    assert.equal(report.finalised, true);

    const again = await runCli(['publish', dataDir, tarball]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error \[publish\.out_exists\]: /m);
    await assertNoLeftovers(work);
  });
});

describe('publish without the ptau', () => {
  const out = () => path.join(work, 'without-ptau');

  test('the ptau is left out and recorded (path, size, hashes, source)', async () => {
    const result = await runCli([
      'publish',
      dataDir,
      out(),
      '--without-ptau',
      '--ptau-source',
      'https://example.org/pot10.ptau',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      await listFiles(out()),
      [...EXPECTED.filter((f) => !f.startsWith('ptau/')), 'ptau-source.json'].sort(),
    );
    const record = JSON.parse(await readFile(path.join(out(), 'ptau-source.json'), 'utf8'));
    assert.equal(record.file, 'ptau/dev-pot10-insecure.ptau');
    assert.equal(record.size, (await stat(ptauFile)).size);
    assert.equal(record.source, 'https://example.org/pot10.ptau');
    const { stdout } = await run('sha256sum', [ptauFile]);
    assert.equal(record.sha256, stdout.split(' ')[0]);
    await assertChecksumsVerify(out());
  });

  test('the audit says what is missing and where to get it', async () => {
    const result = await runCli(['audit', out(), '--config', auditorConfigOf(dataDir), '--quiet']);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      new RegExp(
        '^ptau FAIL: \\[chain\\.file_missing\\] the powers of tau ' +
          '\\(ptau\\/dev-pot10-insecure\\.ptau, \\d+ bytes\\) was left out of this ' +
          'publication; download it from https:\\/\\/example\\.org\\/pot10\\.ptau ' +
          '.*--ptau FILE \\(and --ptau-hash HASH unless it is a known public ptau',
        'm',
      ),
    );
  });

  test('without the record either, the audit names the missing ptau as ceremony.json does, with its code', async () => {
    const bare = path.join(work, 'without-ptau-or-record');
    await cp(out(), bare, { recursive: true });
    await rm(path.join(bare, 'ptau-source.json'));
    const result = await runCli(['audit', bare, '--config', auditorConfigOf(dataDir), '--quiet', '--json']);
    assert.equal(result.code, 1);
    const report = JSON.parse(result.stdout) as {
      findings: Array<{ subject: string; ok: boolean; code?: string; summary: string }>;
    };
    const ptau = report.findings.find((f) => f.subject === 'ptau');
    assert.equal(ptau?.ok, false);
    assert.equal(ptau?.code, 'chain.file_missing');
    assert.match(
      ptau?.summary ?? '',
      /the powers of tau \(ptau\/dev-pot10-insecure\.ptau\) is missing from this folder/,
    );
    assert.ok(!result.stdout.includes(bare), 'no full path in the findings');
  });

  test('--ptau with another file is refused; with the recorded one the audit passes', async () => {
    const wrong = await runCli([
      'audit',
      out(),
      '--config',
      auditorConfigOf(dataDir),
      '--quiet',
      '--ptau',
      path.join(out(), 'circuits', 'register.r1cs'),
      '--ptau-hash',
      await devPtauHash(),
    ]);
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stdout,
      /^ptau FAIL: \[chain\.file_hash_mismatch\] .* is not the powers of tau this publication records/m,
    );
    const right = await runCli([
      ...['audit', out(), '--no-queue-log', '--config', auditorConfigOf(dataDir), '--quiet'],
      ...['--ptau', ptauFile, '--ptau-hash', await devPtauHash()],
    ]);
    assert.equal(right.code, 0, right.stdout + right.stderr);
    assert.match(right.stdout, /^audit passed$/m);
  });

  test('--ptau-source without --without-ptau is a usage error', async () => {
    const result = await runCli([
      'publish',
      dataDir,
      path.join(work, 'never'),
      '--ptau-source',
      'https://example.org/x',
    ]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^error \[usage\.invalid_arguments\]: /m);
  });
});

describe('a ceremony.json that points outside the data folder', () => {
  test('is refused as config.invalid, the configuration being wrong (not an input file): exit 1, not 2', async () => {
    const config = await loadCeremonyConfig(dataDir);
    await assert.rejects(
      publicFileList({ ...config, ptau: '../elsewhere.ptau' }, [], { withPtau: true }),
      (error: unknown) => {
        assert.ok(isCoordinatorError(error, 'config.invalid'), String(error));
        assert.match(error.message, /the ptau \(\.\.\/elsewhere\.ptau\) is outside the data folder/);
        return true;
      },
    );
  });
});

describe('the coordinator’s receipt key', () => {
  test('receipt-public-key.pem, as the coordinator writes it, is published; a private key there stops it', async () => {
    const served = await copyCeremony(dataDir);
    try {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      await writeReceiptPublicKey(served, pem);
      const out = path.join(work, 'with-receipt-key');
      const result = await runCli(['publish', served, out]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(await listFiles(out), [...EXPECTED, 'receipt-public-key.pem'].sort());
      assert.equal(await readFile(path.join(out, 'receipt-public-key.pem'), 'utf8'), pem);
      await assertChecksumsVerify(out);

      await writeFile(path.join(served, 'receipt-public-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const refused = await runCli(['publish', served, path.join(work, 'with-private-key')]);
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(refused.stderr, /^error \[receipt\.key_unavailable\]: receipt-public-key\.pem is not a PEM public/m);
      const left = (await readdir(work)).filter((name) => name.includes('with-private-key'));
      assert.deepEqual(left, [], 'nothing written');
    } finally {
      await rm(served, { recursive: true, force: true });
    }
  });
});
