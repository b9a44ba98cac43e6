/**
 * The default audit holds each key between to its transcript entry by its section hashes and its
 * layout, reading it once (core/audit/key-section-hashes.ts): every byte of a sectioned key is fixed
 * by its sections and its layout, so a key between laid out otherwise than a contribution (sections
 * reordered, bytes after the last, another version) is judged by its whole file as the link-by-link
 * audit judges it, and fails with the same code. The section hashes agree with the whole-file
 * hasher's, on the calling thread and on the hasher's threads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { devPtauHash } from '../fixtures/ceremony-fixture.ts';
import { auditCeremony, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { readKeyLayout, SectionHasher } from '../../core/audit/key-section-hashes.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { hashZkeyFile } from '../../core/zkey/zkey-hashes.ts';
import { editSections } from '../helpers/zkey-tamper.ts';
import { twoCircuitCeremony } from '../helpers/two-circuit-ceremony.ts';

const fixture = twoCircuitCeremony();

/** The audit's failed findings as "subject code". */
const failures = (report: AuditReport): string[] =>
  report.findings.filter((f) => !f.ok).map((f) => `${f.subject} ${f.code}`);

/** A copy of the ceremony with `tamper` applied, audited by default and link by link. */
async function auditedBothWays(tamper: (dir: string) => Promise<void>) {
  const dir = await fixture.copy();
  await tamper(dir);
  const audit = async (chainCheck?: 'every-link') =>
    auditCeremony(dir, undefined, {
      ...(chainCheck ? { chainCheck } : {}),
      noQueueLog: true,
      auditorConfig: fixture.auditorConfig(),
      ptauHash: await devPtauHash(),
    });
  return { byDefault: await audit(), everyLink: await audit('every-link') };
}

/** Contribution 1 of transact21: a key between (the chain has 2 contributions and the beacon). */
const keyBetween = (dir: string) => ceremonyPaths(dir).zkeyPath('transact21', 1);

test('the section hashes of a key, on the calling thread and on the threads, are the whole-file hasher’s', async () => {
  const file = keyBetween(fixture.published.dataDir);
  const { sectionHashes } = await hashZkeyFile(file);
  const layout = await readKeyLayout(file);
  assert.deepEqual(
    layout.order,
    [...layout.order].sort((a, b) => a - b),
    'a contribution: ascending',
  );
  const inThread = new SectionHasher(2);
  const onThreads = new SectionHasher(2, 0);
  try {
    assert.deepEqual(await inThread.hash(file, layout), sectionHashes);
    // Three keys on two threads: one waits for a thread, all answer.
    const three = await Promise.all([1, 2, 3].map(() => onThreads.hash(file, layout)));
    for (const hashes of three) assert.deepEqual(hashes, sectionHashes);
    await assert.rejects(onThreads.hash(`${file}.missing`, layout), { code: 'ENOENT' });
    assert.deepEqual(await onThreads.hash(file, layout), sectionHashes, 'a failed read leaves the thread usable');
  } finally {
    await inThread.close();
    await onThreads.close();
  }
  await assert.rejects(onThreads.hash(file, layout), /stopped/);
});

test('a key between whose sections were reordered (each one the committed one) fails as link by link', async () => {
  const { byDefault, everyLink } = await auditedBothWays(async (dir) => {
    const file = keyBetween(dir);
    await writeFile(
      file,
      editSections(await readFile(file), (f) => f.sections.reverse()),
    );
  });
  assert.deepEqual(failures(byDefault), ['transact21 chain.file_hash_mismatch', 'manifest input.invalid']);
  assert.deepEqual(failures(byDefault), failures(everyLink));
});

test('a key between with bytes after its last section, or another version, fails as link by link', async () => {
  for (const tamper of [
    (file: string) => appendFile(file, Buffer.from([0])),
    async (file: string) => {
      const bytes = await readFile(file);
      bytes.writeUInt32LE(bytes.readUInt32LE(4) + 1, 4);
      await writeFile(file, bytes);
    },
  ]) {
    const { byDefault, everyLink } = await auditedBothWays((dir) => tamper(keyBetween(dir)));
    assert.deepEqual(failures(byDefault), ['transact21 chain.file_hash_mismatch', 'manifest input.invalid']);
    assert.deepEqual(failures(byDefault), failures(everyLink));
  }
});

test('the default audit says how it held the keys between', async () => {
  const report = await auditCeremony(fixture.published.dataDir, undefined, {
    noQueueLog: true,
    auditorConfig: fixture.auditorConfig(),
    ptauHash: await devPtauHash(),
  });
  assert.equal(report.ok, true);
  assert.match(
    report.findings.find((f) => f.subject === 'transact21')!.summary,
    new RegExp(
      "the \\d+ keys? between: held to their transcript's section hashes, which in a contribution's layout " +
        'fix every byte \\(their whole-file hashes not computed\\)',
    ),
  );
});
