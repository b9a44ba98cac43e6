/**
 * The default audit holds each key between to its transcript entry by its section hashes and its
 * layout, reading it once (core/audit/key-section-hashes.ts): every byte of a sectioned key is fixed
 * by its sections and its layout, so a key between laid out otherwise than a contribution (sections
 * reordered, bytes after the last, another version) is judged by its whole file as the link-by-link
 * audit judges it, and fails with the same code. The section hashes agree with the whole-file
 * hasher's, on the calling thread and on the hasher's threads; a thread that fails or exits while it
 * hashes a key rejects that key's hashes (its check fails closed) and a new thread serves the next;
 * a thread's answer is only ever its own key's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { devPtauHash } from '../fixtures/ceremony-fixture.ts';
import { auditCeremony, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { readKeyLayout, SectionHasher } from '../../core/audit/key-section-hashes.ts';
import { expectSectionHashes } from '../../core/audit/chain-audit-context.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { hashZkeyFile } from '../../core/zkey/zkey-hashes.ts';
import { editSections } from '../helpers/zkey-tamper.ts';
import { RealWorker, withWorkerClass } from '../helpers/worker-class.ts';
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

/**
 * Worker, but for the first `failing` threads it starts, which also run `failure` on each key they
 * are given, once their real hashing has started: the key is mid-hash when it runs.
 */
function failingThreads(failure: string, failing = 1): typeof RealWorker {
  return class extends RealWorker {
    constructor(...[source, options]: ConstructorParameters<typeof RealWorker>) {
      super(failing-- > 0 ? `${String(source)}\nparentPort.on('message', () => { ${failure} });` : source, options);
    }
  };
}

test('a hashing thread that fails or exits mid-key rejects that key, and a new thread serves the next', async () => {
  const file = keyBetween(fixture.published.dataDir);
  const { fileHash, sectionHashes } = await hashZkeyFile(file);
  const layout = await readKeyLayout(file);
  for (const [failure, why] of [
    ["throw new Error('a thread failing mid-key')", /a thread failing mid-key/],
    ['process.exit(3)', /thread stopped/],
  ] as const) {
    await withWorkerClass(failingThreads(failure), async () => {
      const hasher = new SectionHasher(1, 0);
      try {
        const failed = hasher.hash(file, layout);
        const next = hasher.hash(file, layout); // waits for the one thread
        await assert.rejects(failed, why);
        assert.deepEqual(await next, sectionHashes, `${failure}: a new thread serves the key that waited`);
        assert.deepEqual(await hasher.hash(file, layout), sectionHashes, `${failure}: and the one after`);
      } finally {
        await hasher.close();
      }
    });
    // The audit's check of a key between on such a thread: it fails, never passes the key.
    await withWorkerClass(failingThreads(failure), async () => {
      const hasher = new SectionHasher(1, 0);
      try {
        const checked = expectSectionHashes(
          file,
          { fileHash, sectionHashes: sectionHashes! },
          'contribution 1',
          layout,
          hasher,
        );
        await assert.rejects(checked, { code: 'chain.file_unreadable' });
      } finally {
        await hasher.close();
      }
    });
  }
});

test('a thread that answers a key twice: its second answer is taken for no other key', async () => {
  const files = [1, 2].map((index) => ceremonyPaths(fixture.published.dataDir).zkeyPath('transact21', index));
  const [first, second] = await Promise.all(files.map(async (file) => (await hashZkeyFile(file)).sectionHashes));
  const layouts = await Promise.all(files.map((file) => readKeyLayout(file)));
  assert.notDeepEqual(first, second);
  const twice =
    'const post = parentPort.postMessage.bind(parentPort); parentPort.postMessage = (r) => { post(r); post(r); };';
  await withWorkerClass(failingThreads(twice), async () => {
    const hasher = new SectionHasher(1, 0);
    try {
      // The second waits for the one thread, and is given it as the first's answer comes.
      const answers = await Promise.all([0, 1, 0].map((n) => hasher.hash(files[n]!, layouts[n]!)));
      assert.deepEqual(answers, [first, second, first]);
    } finally {
      await hasher.close();
    }
  });
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
