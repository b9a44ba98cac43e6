/**
 * `ceremony verify-receipt RECEIPTS.json DIR` offline, on a published finalised ceremony whose
 * coordinator signed a receipt per contribution: every receipt of a contributor is found in the
 * final key at its position (one line each, exit 0), in each file shape; and each way a receipt
 * can fail is caught with its own code and words, exit 1: a forged signature, a receipt of another
 * ceremony, one the transcript does not hold, one left out of a rebuilt chain (the final key made
 * from another head), a final key with a rewritten history, and, each with the coordinator's
 * transcript forged to match the key so that only the new checks can tell: a later record whose
 * proof of knowledge is bad, a δ2 not paired with δ1, a changed IC; and a source serving the
 * check other bytes than its transcript names. Before finalisation the head is checked instead and
 * said so. Usage and input errors exit 2.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import {
  ALICE_IN_OPEN_REGISTER_HEAD,
  receiptsCeremony,
  type ReceiptJson,
  type ReceiptsCeremony,
} from '../helpers/receipts-ceremony.ts';
import { rewriteHistory } from '../helpers/rewrite-mpc-section.ts';
import { runCli, type CliResult } from '../helpers/run-cli.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { contributionHash } from '../../core/zkey/contribution-hash.ts';
import { readZkeyInfo, SECTION } from '../../core/zkey/zkey-file.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import type { TranscriptEntry } from '../../core/transcript/transcript.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { ReceiptSigner } from '../../server/contributions/receipt-signer.ts';
import { joined } from '../helpers/joined-regex.ts';

let ceremony: ReceiptsCeremony;
let work: string;
let published: string;

const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function receiptsFile(name: string, contents: unknown): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, `${JSON.stringify(contents, null, 2)}\n`);
  return file;
}

/** A copy of the publication to break. */
async function publicationCopy(name: string): Promise<string> {
  const dir = path.join(work, name);
  await cp(published, dir, { recursive: true });
  return dir;
}

function assertFails(result: CliResult, subject: string, code: string, message: RegExp): void {
  assert.equal(result.code, 1, result.stdout + result.stderr);
  const line = result.stdout.split('\n').find((l) => l.startsWith(`${subject} `));
  assert.ok(line, `a line for ${subject} in:\n${result.stdout}`);
  assert.ok(line.startsWith(`${subject} FAIL [${code}]: `), line);
  assert.match(line, message);
  assert.match(
    result.stderr,
    new RegExp(`^error \\[${code.replace('.', '\\.')}\\]: ${subject.replace(/[()#]/g, '\\$&')}: `, 'm'),
  );
}

const register = (receipts: ReceiptJson[]) => receipts.find((r) => JSON.parse(r.body).circuit === 'register')!;

/**
 * Records `file` as the final key of register in `dir`'s transcript (its file and section hashes,
 * and its beacon record's contribution hash), as a coordinator that made that key would have.
 */
async function recordFinalKey(dir: string, change?: (entries: TranscriptEntry[]) => TranscriptEntry[]): Promise<void> {
  const file = path.join(dir, 'final', 'register.zkey');
  const hashes = await hashKeyFile(file, 'the final key');
  const beacon = contributionHash(await getBn128(), (await readZkeyInfo(file)).mpc.contributions.at(-1)!);
  await rewriteTranscript(dir, (entries) =>
    (change ?? ((e) => e))(entries).map((e) =>
      e.type === 'beacon' && e.circuit === 'register' ? { ...e, ...hashes, contributionHash: beacon } : e,
    ),
  );
}

/** Copies `length` bytes at `from` of `file` to `to`, in place. */
async function copyBytesWithin(file: string, from: number, to: number, length: number): Promise<void> {
  const bytes = await readFile(file);
  bytes.copy(bytes, to, from, from + length);
  await writeFile(file, bytes);
}

/** `ceremony verify-receipt` of `contributor`'s register receipt alone, saved as `file`, against `dir`. */
async function verifyRegisterReceipt(contributor: string, file: string, dir: string): Promise<CliResult> {
  return runCli(['verify-receipt', await receiptsFile(file, register(ceremony.receiptsOf(contributor))), dir]);
}

const REGISTER_POSITION = { alice: 1, bob: 2 } as const;

/** `who`'s register receipt alone, checked against the broken copy `dir`, fails with `code`, saying `message`. */
async function assertRegisterReceiptFails(
  who: keyof typeof REGISTER_POSITION,
  dir: string,
  code: string,
  message: RegExp,
): Promise<void> {
  const result = await verifyRegisterReceipt(who, `${who}-${path.basename(dir)}.json`, dir);
  assertFails(result, `register #${REGISTER_POSITION[who]} (${who})`, code, message);
}

before(async () => {
  ceremony = await receiptsCeremony();
  work = await mkdtemp(path.join(tmpdir(), 'verify-receipt-'));
  published = path.join(work, 'published');
  await publishCeremony(ceremony.dataDir, published);
});

after(async () => {
  await releaseBn128();
  await rm(ceremony.dataDir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('receipts that are in the final keys', () => {
  test(
    'every receipt of a contributor, from the published folder: one line each, exit 0',
    { timeout: 60_000 },
    async () => {
      const file = await receiptsFile('alice.json', { receipts: ceremony.receiptsOf('alice') });
      const result = await runCli(['verify-receipt', file, published]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.indexOf('all 9 receipts included'), 9, result.stdout);
      assert.match(result.stdout, /^register #1 \(alice\) ok: included in the final key of register at position 1$/m);
      assert.match(
        result.stdout,
        /^transact84 #1 \(alice\) ok: included in the final key of transact84 at position 1$/m,
      );
      const transcriptLines = (await readFile(path.join(published, 'transcript', 'transcript.jsonl'), 'utf8'))
        .trim()
        .split('\n');
      const last = JSON.parse(transcriptLines.at(-1)!);
      assert.equal(
        lines.at(-1),
        `ceremony identifier: ${last.hash} (the hash of transcript entry ${last.seq}, its last: finalised)`,
      );
      assert.match(result.stdout, /^proven for each receipt included:$/m);
      assert.match(result.stdout, /^ {2}- every later record's proof of knowledge and δ step, up to the key's δ/m);
      assert.match(result.stdout, /^ {2}- the key's IC, α, β, γ and other sections no contribution changes/m);
      assert.match(result.stdout, /^left to the audit \(`ceremony audit DIR`, once, by anyone\):$/m);
      assert.match(
        result.stdout,
        /^ {2}- that contribution 0 is the key the circuit's r1cs and the pinned powers of tau/m,
      );
      for (const step of [
        /signed by the coordinator's receipt key/,
        /recorded as contribution 1 of register \(transcript entry \d+ of 37, hash chain recomputed\)/,
        /the final key of register lists it at position 1 of 3; .* the bytes read are the ones the transcript's/,
        /records 2 to 3: every proof of knowledge and δ step verified \(pairings\)/,
        /sections 1, 3–7 \(IC, coefficients, A, B1, B2\) and α, β, γ are contribution 0's/,
      ]) {
        assert.match(result.stderr, step, 'progress says what each step established');
      }
    },
  );

  test('the file the page saves, and one receipt alone; --json', { timeout: 60_000 }, async () => {
    const bob = ceremony.receiptsOf('bob');
    const saved = await receiptsFile('bob-saved.json', {
      ceremony: ceremony.ceremonyId,
      coordinator: 'http://127.0.0.1:8080',
      receiptPublicKey: ceremony.signer.publicKeyPem,
      signature: 'Ed25519 over each receipt body (UTF-8)',
      receipts: bob,
    });
    const all = await runCli(['verify-receipt', saved, published, '--quiet']);
    assert.equal(all.code, 0, all.stdout + all.stderr);
    assert.equal(all.stderr, '', '--quiet: no progress');
    assert.match(all.stdout, /^treeUpdate #2 \(bob\) ok: included in the final key of treeUpdate at position 2$/m);
    const one = await runCli([
      'verify-receipt',
      await receiptsFile('bob-one.json', register(bob)),
      published,
      '--json',
    ]);
    assert.equal(one.code, 0, one.stdout + one.stderr);
    const report = JSON.parse(one.stdout);
    assert.equal(report.ok, true);
    const [verdict] = report.receipts;
    assert.equal(report.receipts.length, 1);
    assert.deepEqual(
      { ...verdict, proven: undefined, restsOnAudit: undefined },
      {
        circuit: 'register',
        index: 2,
        contributor: 'bob',
        contributionHash: JSON.parse(register(bob).body).contributionHash,
        ok: true,
        key: 'final',
        keyIndex: 3,
        message: 'included in the final key of register at position 2',
        proven: undefined,
        restsOnAudit: undefined,
      },
    );
    assert.equal(verdict.proven.length, 5);
    assert.equal(verdict.restsOnAudit.length, 3);
    assert.match(report.identifier.hash, /^[0-9a-f]{128}$/);
  });

  test(
    'before finalisation, the head of each chain is checked instead, and that is said',
    { timeout: 60_000 },
    async () => {
      const dir = path.join(work, 'open-data');
      await cp(ceremony.dataDir, dir, { recursive: true, verbatimSymlinks: true });
      const transcript = path.join(dir, 'transcript', 'transcript.jsonl');
      // init, alice and bob on nine circuits: a prefix of a hash chain is a hash chain.
      await writeFile(transcript, (await readFile(transcript, 'utf8')).split('\n').slice(0, 27).join('\n') + '\n');
      await rm(path.join(dir, 'final'), { recursive: true });
      const open = path.join(work, 'published-open');
      await publishCeremony(dir, open);
      const result = await runCli([
        'verify-receipt',
        await receiptsFile('alice-open.json', ceremony.receiptsOf('alice')),
        open,
      ]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(result.stdout, ALICE_IN_OPEN_REGISTER_HEAD);
    },
  );
});

/** The entry as format 1 wrote it: no version, no section hashes (a coordinator downgrading its record). */
function asFormat1(entry: TranscriptEntry): TranscriptEntry {
  const { version: _version, ...rest } = entry as TranscriptEntry & { sectionHashes?: unknown };
  delete rest.sectionHashes;
  return rest as TranscriptEntry;
}

/** A copy of the publication whose final key of register has IC[0] replaced by IC[1], recorded in its transcript. */
async function publicationWithChangedIc(name: string): Promise<string> {
  const dir = await publicationCopy(name);
  const finalKey = path.join(dir, 'final', 'register.zkey');
  const ic = (await readZkeyInfo(finalKey)).sections.get(SECTION.ic)!;
  await copyBytesWithin(finalKey, ic.offset, ic.offset + 64, 64);
  await recordFinalKey(dir);
  return dir;
}

describe('no downgrade: format 1 is refused unless --allow-legacy-transcript, which says what it leaves', () => {
  test('forgery: a format-1 ceremony whose final key’s IC was altered is refused', { timeout: 60_000 }, async () => {
    const dir = await publicationWithChangedIc('format-1-ic');
    await rewriteTranscript(dir, (entries) => entries.map(asFormat1));
    await assertRegisterReceiptFails(
      'bob',
      dir,
      'transcript.legacy_format',
      joined(
        '',
        /the transcript the publication .* serves is of format 1, from before section hashes: its entries commit /,
        /to 36 keys \(contribution 0 of register, .*\) by whole-file hash only, .*a new ceremony never writes it\. /,
        /To check it with what format 1 can prove, run `ceremony verify-receipt RECEIPTS\.json DIR /,
        /--allow-legacy-transcript` from your own checkout/,
      ),
    );
    // Allowed, the receipt passes (the IC is not checked), and the verdict says what was not proven.
    const receipts = await receiptsFile('bob-format-1.json', register(ceremony.receiptsOf('bob')));
    const allowed = await runCli(['verify-receipt', receipts, dir, '--allow-legacy-transcript']);
    assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr);
    assert.match(
      allowed.stdout,
      joined(
        'm',
        /^register #2 \(bob\) ok: included in the final key of register at position 2 \(LEGACY transcript, allowed: /,
        /the bytes read NOT held to the transcript; the key's fixed sections and α, β, γ NOT checked against /,
        /contribution 0's: format-1 entries hash whole files only\)$/,
      ),
    );
    assert.match(allowed.stdout, /^NOT proven \(a legacy transcript, read with --allow-legacy-transcript\):$/m);
    assert.doesNotMatch(allowed.stdout, /IC, α, β, γ and other sections no contribution changes/);
    assert.match(allowed.stdout, /^ {2}- that the bytes this check read are the ones the coordinator recorded/m);
    assert.match(allowed.stderr, /not checked: the transcript is of format 1 \(no section hashes\); left to the audit/);
  });

  test(
    'forgery: a mixed transcript (format-1 inits, then format 2) skipped contribution 0’s check, and is refused',
    { timeout: 60_000 },
    async () => {
      const dir = await publicationWithChangedIc('mixed-ic');
      await rewriteTranscript(dir, (entries) => entries.map((e) => (e.type === 'init' ? asFormat1(e) : e)));
      await assertRegisterReceiptFails(
        'bob',
        dir,
        'transcript.mixed_format',
        joined(
          '',
          /the transcript the publication .* serves mixes formats: entries of format 1 commit to 9 keys /,
          /\(contribution 0 of register, .*\) by whole-file hash only, and format-2 entries follow them, .*/,
          /\(the check against contribution 0 would be skipped\)/,
        ),
      );
      const receipts = await receiptsFile('bob-mixed.json', register(ceremony.receiptsOf('bob')));
      const allowed = await runCli(['verify-receipt', receipts, dir, '--allow-legacy-transcript', '--json']);
      assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr);
      const [verdict] = JSON.parse(allowed.stdout).receipts;
      // The final key's own bytes are bound (its entry is format 2); contribution 0's sections are not.
      assert.deepEqual(verdict.unproven, ["the key's fixed sections and α, β, γ NOT checked against contribution 0's"]);
      assert.match(verdict.message, /\(LEGACY transcript, allowed: the key's fixed sections .* NOT checked/);
    },
  );
});

describe('--identifier: the ceremony identifier compared out of band', () => {
  test('the transcript of that identifier passes and says so; another view ends the command', async () => {
    const transcriptLines = (await readFile(path.join(published, 'transcript', 'transcript.jsonl'), 'utf8'))
      .trim()
      .split('\n');
    const last = JSON.parse(transcriptLines.at(-1)!) as TranscriptEntry;
    const receipts = await receiptsFile('alice-identified.json', register(ceremony.receiptsOf('alice')));
    const same = await runCli(['verify-receipt', receipts, published, '--identifier', last.hash]);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.equal(
      same.stdout.trim().split('\n').at(-1),
      `ceremony identifier: ${last.hash} (the hash of transcript entry ${last.seq}, its last: finalised), ` +
        'the one given with --identifier',
    );
    // Another view of the ceremony (here, as it stood before finalisation) is not the one compared.
    const earlier = await publicationCopy('earlier-view');
    await rewriteTranscript(earlier, (entries) => entries.filter((e) => e.type !== 'finalised'));
    const other = await runCli(['verify-receipt', receipts, earlier, '--identifier', last.hash]);
    assert.equal(other.code, 1, other.stdout + other.stderr);
    assert.equal(other.stdout, '', 'no verdict for another ceremony');
    assert.match(
      other.stderr,
      joined(
        'm',
        /^error \[transcript\.identifier_mismatch\]: the transcript the publication .* serves is not the ceremony /,
        new RegExp(`whose identifier you gave \\(--identifier ${last.hash}\\): its identifier is [0-9a-f]{128} `),
        /\(the hash of entry \d+, its last\), and no entry has the hash given$/,
      ),
    );
    const malformed = await runCli(['verify-receipt', receipts, published, '--identifier', 'xyz']);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /^error \[usage\.invalid_arguments\]: --identifier takes the ceremony identifier/m);
  });
});

describe('each way a receipt itself can fail, with its own code and words', () => {
  test('a forged signature: a changed body, or a receipt signed by another key', { timeout: 60_000 }, async () => {
    const genuine = register(ceremony.receiptsOf('alice'));
    const changed = {
      ...genuine,
      body: genuine.body.replace(/"acceptedAt":"[^"]+"/, '"acceptedAt":"2020-01-01T00:00:00.000Z"'),
    };
    assert.notEqual(changed.body, genuine.body);
    const result = await runCli(['verify-receipt', await receiptsFile('forged.json', [changed, genuine]), published]);
    assertFails(
      result,
      'register #1 (alice)',
      'receipt.bad_signature',
      joined(
        '',
        /its signature is not the coordinator's: it does not verify against the receipt key the publication .* /,
        /publishes \(SHA-256 [0-9a-f]{16}…\), so the receipt was altered or this coordinator did not sign it$/,
      ),
    );
    assert.match(
      result.stdout,
      /^verify-receipt FAILED: 1 of 2 receipts did not pass$/m,
      'the genuine one still passes',
    );
    const stranger = await ReceiptSigner.fromKeyFile(path.join(work, 'stranger', 'key.pem'));
    const signedByStranger = stranger.sign(JSON.parse(genuine.body));
    const second = await runCli(['verify-receipt', await receiptsFile('stranger.json', signedByStranger), published]);
    assertFails(second, 'register #1 (alice)', 'receipt.bad_signature', /does not verify against the receipt key/);
  });

  test('a receipt of another ceremony', { timeout: 60_000 }, async () => {
    const other = await ReceiptSigner.fromKeyFile(path.join(work, 'other-coordinator', 'key.pem'));
    const receipt = other.sign({
      ...JSON.parse(register(ceremony.receiptsOf('alice')).body),
      ceremony: 'another-ceremony',
    });
    const result = await runCli(['verify-receipt', await receiptsFile('other.json', receipt), published]);
    assertFails(
      result,
      'register #1 (alice)',
      'receipt.other_ceremony',
      new RegExp(
        `this receipt is for ceremony "another-ceremony"; the publication .* is ceremony "${ceremony.ceremonyId}"$`,
      ),
    );
  });

  test(
    'a contribution the transcript does not hold, at that position or with those hashes',
    { timeout: 60_000 },
    async () => {
      const body = JSON.parse(register(ceremony.receiptsOf('alice')).body);
      const beyond = ceremony.signer.sign({ ...body, index: 3 });
      const swapped = ceremony.signer.sign({
        ...body,
        contributionHash: JSON.parse(register(ceremony.receiptsOf('bob')).body).contributionHash,
      });
      const result = await runCli([
        'verify-receipt',
        await receiptsFile('not-recorded.json', [beyond, swapped]),
        published,
      ]);
      assertFails(
        result,
        'register #3 (alice)',
        'receipt.not_in_transcript',
        /the transcript has no contribution 3 of register: its chain has 2$/,
      );
      assertFails(
        result,
        'register #1 (alice)',
        'receipt.not_in_transcript',
        /the transcript records another contribution as register #1: its contributionHash differs from the receipt's/,
      );
    },
  );

  test('a publication without the receipt key says where to get one', { timeout: 60_000 }, async () => {
    const dir = await publicationCopy('no-key');
    await rm(path.join(dir, 'receipt-public-key.pem'));
    await assertRegisterReceiptFails(
      'alice',
      dir,
      'receipt.key_unavailable',
      /has no receipt-public-key\.pem .*--coordinator URL$/,
    );
  });
});

describe("each way the final key's history can fail a receipt, with its own code and words", () => {
  test('left out of a rebuilt chain: the final key was made from another head', { timeout: 60_000 }, async () => {
    const dir = await publicationCopy('rebuilt');
    // The beacon applied to alice's link instead of bob's: a real final key that never saw bob.
    assert.ok(
      await snarkjs.zKey.beacon(
        path.join(dir, 'chains', 'register', 'register_0001.zkey'),
        path.join(dir, 'final', 'register.zkey'),
        'Final beacon',
        TEST_BEACON,
        TEST_BEACON_ITERATIONS,
        silent,
      ),
    );
    // And recorded in the transcript, so that the bytes served are the ones it names.
    await recordFinalKey(dir);
    const bob = await runCli(['verify-receipt', await receiptsFile('bob-all.json', ceremony.receiptsOf('bob')), dir]);
    assertFails(
      bob,
      'register #2 (bob)',
      'receipt.not_in_key',
      joined(
        '',
        /^register #2 \(bob\) FAIL \[receipt\.not_in_key\]: the final key of register does not descend from this /,
        /contribution: its own history of 2 records does not list it \(the final key was made from another head than /,
        /the chain the transcript records\)$/,
      ),
    );
    assert.match(
      bob.stdout,
      /^verify-receipt FAILED: 1 of 9 receipts did not pass$/m,
      'the other circuits are unaffected',
    );
    await assertRegisterReceiptFails(
      'alice',
      dir,
      'receipt.history_invalid',
      joined(
        '',
        /the final key of register lists this contribution, but its history is not the transcript's chain: its record /,
        /2 \(contribution hash [0-9a-f]{16}…\) is not the transcript's contribution 2/,
      ),
    );
  });

  test('a final key with a rewritten history', { timeout: 60_000 }, async () => {
    const dir = await publicationCopy('rewritten');
    const finalKey = path.join(dir, 'final', 'register.zkey');
    await rewriteHistory(finalKey, `${finalKey}.tmp`, { records: (records) => records.slice(1) });
    await cp(`${finalKey}.tmp`, finalKey);
    await rm(`${finalKey}.tmp`);
    await recordFinalKey(dir);
    await assertRegisterReceiptFails(
      'bob',
      dir,
      'receipt.history_invalid',
      joined(
        '',
        /the final key of register: record 1's transcript digest does not follow from the circuit hash and the 0 /,
        /records before it: the key's contribution history was rewritten$/,
      ),
    );
  });
});

describe('beyond the history: each key the coordinator recorded as its own, refused by what it proves', () => {
  test('a later record whose proof of knowledge is bad', { timeout: 120_000 }, async () => {
    const dir = await publicationCopy('bad-proof');
    const chain = path.join(dir, 'chains', 'register');
    const head = path.join(chain, 'register_0002.zkey');
    const honest = path.join(work, 'mallory-honest.zkey');
    const mallory = path.join(chain, 'register_0003.zkey');
    // A real contribution on bob's head, then its g2_spx swapped for bob's: its transcript digest
    // (over g1_s, g1_sx) still chains, but the proof of knowledge no longer holds.
    await snarkjs.zKey.contribute(head, honest, 'mallory', 'entropy of mallory', silent);
    await rewriteHistory(honest, mallory, {
      records: (records) =>
        records.map((record, i) =>
          i === records.length - 1
            ? {
                ...record,
                raw: Buffer.concat([record.raw.subarray(0, 192), records[i - 1]!.g2Spx, record.raw.subarray(320)]),
              }
            : record,
        ),
    });
    const finalKey = path.join(dir, 'final', 'register.zkey');
    await rm(finalKey);
    assert.ok(
      await snarkjs.zKey.beacon(mallory, finalKey, 'Final beacon', TEST_BEACON, TEST_BEACON_ITERATIONS, silent),
    );
    const malloryRecord = (await readZkeyInfo(mallory)).mpc.contributions.at(-1)!;
    const malloryEntry = {
      type: 'contribution',
      circuit: 'register',
      index: 3,
      contributor: 'mallory',
      contributionHash: contributionHash(await getBn128(), malloryRecord),
      ...(await hashKeyFile(mallory, 'mallory')),
      version: 2,
      time: new Date().toISOString(),
    } as TranscriptEntry;
    await recordFinalKey(dir, (entries) => {
      const at = entries.findIndex((e) => e.type === 'beacon' && e.circuit === 'register');
      entries[at] = { ...entries[at]!, index: 4 } as TranscriptEntry;
      return [...entries.slice(0, at), malloryEntry, ...entries.slice(at)];
    });
    for (const who of ['alice', 'bob'] as const) {
      await assertRegisterReceiptFails(
        who,
        dir,
        'receipt.proof_invalid',
        /the final key of register: record 3 does not prove knowledge of its secret/,
      );
    }
  });

  test('a δ in G2 that is not the δ in G1', { timeout: 60_000 }, async () => {
    const dir = await publicationCopy('delta2');
    const finalKey = path.join(dir, 'final', 'register.zkey');
    const header = (await readZkeyInfo(finalKey)).sections.get(SECTION.grothHeader)!;
    const bobs = path.join(dir, 'chains', 'register', 'register_0002.zkey');
    const bobsHeader = (await readZkeyInfo(bobs)).sections.get(SECTION.grothHeader)!;
    // bob's δ2: a point of G2's subgroup, but not the final δ1's.
    const bytes = await readFile(finalKey);
    (await readFile(bobs)).copy(bytes, header.offset + 532, bobsHeader.offset + 532, bobsHeader.offset + 660);
    await writeFile(finalKey, bytes);
    await recordFinalKey(dir);
    await assertRegisterReceiptFails(
      'alice',
      dir,
      'receipt.delta_mismatch',
      /the final key of register: its δ in G2 is not its δ in G1: e\(δ1, g2\) ≠ e\(g1, δ2\)$/,
    );
  });

  test('IC changed in the final key', { timeout: 60_000 }, async () => {
    const dir = await publicationCopy('ic');
    const finalKey = path.join(dir, 'final', 'register.zkey');
    const ic = (await readZkeyInfo(finalKey)).sections.get(SECTION.ic)!;
    await copyBytesWithin(finalKey, ic.offset, ic.offset + 64, 64);
    await recordFinalKey(dir);
    await assertRegisterReceiptFails(
      'bob',
      dir,
      'receipt.sections_changed',
      /section 3 \(IC\) of the final key of register is not contribution 0's: the transcript records another hash/,
    );
  });

  test('a source that serves the check other bytes than its transcript names', { timeout: 60_000 }, async () => {
    const dir = await publicationCopy('served');
    const finalKey = path.join(dir, 'final', 'register.zkey');
    const ic = (await readZkeyInfo(finalKey)).sections.get(SECTION.ic)!;
    await copyBytesWithin(finalKey, ic.offset, ic.offset + 64, 64);
    await assertRegisterReceiptFails(
      'alice',
      dir,
      'receipt.served_bytes_mismatch',
      joined(
        '',
        /the bytes of section 3 \(IC\) of the final key of register this check was served are not the ones the /,
        /transcript's beacon entry \(entry \d+\) records/,
      ),
    );
  });
});

describe('usage and input errors exit 2', () => {
  test(
    'neither or both of DIR and --coordinator; a bad URL; a missing, malformed or foreign file; a folder that is no ' +
      'publication',
    { timeout: 60_000 },
    async () => {
      const good = await receiptsFile('good.json', ceremony.receiptsOf('alice'));
      const cases: Array<[string[], RegExp]> = [
        [
          ['verify-receipt', good],
          /^error \[usage\.invalid_arguments\]: give either a published folder DIR or --coordinator URL/m,
        ],
        [
          ['verify-receipt', good, published, '--coordinator', 'http://127.0.0.1:1'],
          /^error \[usage\.invalid_arguments\]/m,
        ],
        [
          ['verify-receipt', good, '--coordinator', 'ftp://example.org'],
          /^error \[usage\.invalid_arguments\]: --coordinator must be an http or https URL/m,
        ],
        [
          ['verify-receipt', path.join(work, 'absent.json'), published],
          /^error \[input\.file_not_found\]: cannot read the receipts file/m,
        ],
        [
          ['verify-receipt', await receiptsFile('garbage.json', { hello: 'world' }), published],
          /^error \[receipt\.malformed\]: .*garbage\.json: expected a receipt/m,
        ],
        [
          ['verify-receipt', good, work],
          /^error \[input\.invalid\]: .* is not a published ceremony folder: it has no ceremony\.json/m,
        ],
        [['verify-receipt'], /missing required argument/],
      ];
      for (const [args, stderr] of cases) {
        const result = await runCli(args);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
        assert.match(result.stderr, stderr, args.join(' '));
      }
    },
  );
});
