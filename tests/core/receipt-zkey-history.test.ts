/**
 * The receipt check's reading of a zkey's own contribution history (core/receipts/zkey-history.ts,
 * BigInt and @noble/hashes, no curve library) against snarkjs: the contribution hashes it
 * recomputes are the ones `snarkjs zkey verify` prints and core/zkey/contribution-hash.ts computes
 * with ffjavascript's curve, for every final key of a finalised ceremony; its point encodings are
 * ffjavascript's; it reads only the section table, the header and the MPC section; and a history
 * that was rewritten (a record dropped, a record's key changed, a header δ that is not the last
 * record's, a coordinate out of the field) is refused with what is wrong. The isomorphic modules
 * import nothing of Node.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { finalisedCeremony, REPO_ROOT, type FinalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { contributionHash } from '../../core/zkey/contribution-hash.ts';
import { readZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { parseTranscript } from '../../core/transcript/transcript.ts';
import { folderEvidence } from '../../core/receipts/folder-evidence.ts';
import { checkZkeyHistory, readZkeyHistory } from '../../core/receipts/zkey-history.ts';
import { verificationKeyConstants } from '../../core/receipts/verification-key.ts';
import { g1Uncompressed, g2Uncompressed } from '../../core/receipts/uncompressed-points.ts';
import { BN254_Q } from '../../core/crypto/bn254-moduli.ts';
import { rewriteHistory } from '../helpers/rewrite-mpc-section.ts';
import { joined } from '../helpers/joined-regex.ts';

let ceremony: FinalisedCeremony;
let work: string;

before(async () => {
  ceremony = await finalisedCeremony();
  work = await mkdtemp(path.join(tmpdir(), 'receipt-history-'));
});

after(async () => {
  await releaseBn128();
  await rm(work, { recursive: true, force: true });
});

async function copyWithoutChains(name: string): Promise<string> {
  const dir = path.join(work, name);
  await cp(ceremony.dataDir, dir, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => !src.includes(`${path.sep}chains${path.sep}`),
  });
  return dir;
}

/** Every module specifier of `source` (static, re-exported, side-effect and dynamic imports). */
function importSpecifiers(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"\n]+)\1/gm)].map(
    (match) => match[2]!,
  );
}

/** The history of a key file, read through the same range source `ceremony verify-receipt DIR` uses. */
async function historyOf(file: string) {
  const evidence = await folderEvidence(path.dirname(path.dirname(file)));
  // folderEvidence resolves keys by circuit; a tampered copy sits in `work` under final/ too.
  const source = evidence.keySource(path.basename(file, '.zkey'), { final: true });
  const history = await readZkeyHistory(source);
  return { history, source };
}

describe('against snarkjs', () => {
  test('every final key: the hashes of contribution-hash.ts (ffjavascript) and of the transcript', async () => {
    const curve = await getBn128();
    const transcript = parseTranscript(
      await readFile(path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl'), 'utf8'),
      ceremony.config.id,
    );
    for (const { name } of ceremony.circuits) {
      const file = path.join(ceremony.finalDir, `${name}.zkey`);
      const { history } = await historyOf(file);
      const ours = checkZkeyHistory(history);
      const info = await readZkeyInfo(file);
      assert.deepEqual(
        ours,
        info.mpc.contributions.map((record) => contributionHash(curve, record)),
        name,
      );
      const recorded = transcript
        .filter((e) => (e.type === 'contribution' || e.type === 'beacon') && e.circuit === name)
        .map((e) => (e as { contributionHash: string }).contributionHash);
      assert.deepEqual(ours, recorded, `${name}: the transcript's contribution hashes`);
      assert.equal(ours.length, 3, 'alice, bob and the beacon');
      assert.equal(Buffer.from(history.csHash).toString('hex'), info.mpc.csHash.toString('hex'));
    }
  });

  test('the hashes `snarkjs zkey verify` prints for a final key', { timeout: 120_000 }, async () => {
    const printed: string[] = [];
    const logger = {
      debug() {},
      info: (m: string) => void printed.push(m),
      warn() {},
      error: (m: string) => void printed.push(m),
    };
    const circuit = ceremony.config.circuits.find((c) => c.name === 'register')!;
    const file = path.join(ceremony.finalDir, 'register.zkey');
    assert.equal(
      await snarkjs.zKey.verifyFromR1cs(circuit.r1csPath, ceremony.config.ptauPath, file, logger),
      true,
      printed.join('\n'),
    );
    // "contribution #3 Final beacon:\n\t\t8 hex … (4 lines of 4 groups)"
    const snarkjsHashes = new Map<number, string>();
    for (const message of printed) {
      const match = /^contribution #(\d+) .*:\n([\s\S]+)$/.exec(message);
      if (match) snarkjsHashes.set(Number(match[1]), match[2]!.replace(/\s+/g, ''));
    }
    const ours = checkZkeyHistory((await historyOf(file)).history);
    assert.equal(snarkjsHashes.size, 3, printed.join('\n'));
    assert.deepEqual(
      ours,
      [1, 2, 3].map((n) => snarkjsHashes.get(n)),
    );
  });

  test('G1 and G2 encodings are ffjavascript’s toRprUncompressed, the point at infinity included', async () => {
    const curve = await getBn128();
    const info = await readZkeyInfo(path.join(ceremony.finalDir, 'transact84.zkey'));
    for (const record of info.mpc.contributions) {
      for (const g1 of [record.deltaAfter, record.g1S, record.g1Sx]) {
        const expected = new Uint8Array(64);
        curve.G1.toRprUncompressed(expected, 0, curve.G1.fromRprLEM(g1, 0));
        assert.deepEqual(g1Uncompressed(g1), expected);
      }
      const expected = new Uint8Array(128);
      curve.G2.toRprUncompressed(expected, 0, curve.G2.fromRprLEM(record.g2Spx, 0));
      assert.deepEqual(g2Uncompressed(record.g2Spx), expected);
    }
    const zeroG1 = new Uint8Array(64);
    curve.G1.toRprUncompressed(zeroG1, 0, curve.G1.fromRprLEM(new Uint8Array(64), 0));
    assert.deepEqual(g1Uncompressed(new Uint8Array(64)), zeroG1);
  });
});

describe('the verification key from the bytes read', () => {
  test("α1, β2, γ2, δ2 and every IC point are snarkjs's exported verification key's", async () => {
    for (const circuit of ['register', 'transact84']) {
      const file = path.join(ceremony.finalDir, `${circuit}.zkey`);
      const { history } = await historyOf(file);
      const ours = verificationKeyConstants(history.sections.get(2)!, history.sections.get(3)!);
      const theirs = (await snarkjs.zKey.exportVerificationKey(file)) as unknown as Record<string, unknown>;
      const affine = (point: unknown): unknown => (point as unknown[]).slice(0, 2);
      assert.deepEqual(ours, {
        nPublic: theirs.nPublic,
        vk_alpha_1: affine(theirs.vk_alpha_1),
        vk_beta_2: affine(theirs.vk_beta_2),
        vk_gamma_2: affine(theirs.vk_gamma_2),
        vk_delta_2: affine(theirs.vk_delta_2),
        IC: (theirs.IC as unknown[]).map(affine),
      });
    }
  });
});

describe('reading by ranges', () => {
  test('only the section table, the header, IC and the MPC section are read', async () => {
    const file = path.join(ceremony.finalDir, 'treeUpdate.zkey');
    const { history, source } = await historyOf(file);
    const info = await readZkeyInfo(file);
    const mpcBytes = info.sections.get(10)!.size;
    const icBytes = info.sections.get(3)!.size;
    // The first read takes 1 kB (file header, protocol, header section); then 12 bytes per section
    // header not in it, IC and the MPC section.
    assert.ok(source.bytesRead <= 1024 + 10 * 12 + icBytes + mpcBytes, `${source.bytesRead} bytes read`);
    assert.ok(source.requests <= 11, `${source.requests} reads`);
    assert.deepEqual([...history.sections.keys()], [1, 2, 3, 10]);
    assert.equal(history.sections.get(3)!.length, icBytes);
    assert.equal(history.fileSize, info.fileSize);
    assert.ok(source.bytesRead < info.fileSize / 10, `${source.bytesRead} of ${info.fileSize} bytes`);
    assert.equal(history.records.length, 3);
    assert.equal(history.records[2]!.type, 1, 'the beacon');
    assert.equal(history.records[0]!.name, 'alice');
  });
});

describe('a rewritten history is refused with what is wrong', () => {
  const finalKey = () => path.join(ceremony.finalDir, 'register.zkey');

  /** A copy of the ceremony (without its chains: only final/ is read) whose final key of register is rewritten. */
  async function tampered(name: string, rewrite: Parameters<typeof rewriteHistory>[2]): Promise<string> {
    const dir = await copyWithoutChains(name);
    return rewriteHistory(finalKey(), path.join(dir, 'final', 'register.zkey'), rewrite);
  }

  async function refusal(file: string): Promise<string> {
    const { history } = await historyOf(file);
    try {
      checkZkeyHistory(history);
    } catch (error) {
      assert.ok(isCoordinatorError(error, 'receipt.history_invalid'), String(error));
      return error.message;
    }
    assert.fail('the rewritten history was accepted');
  }

  test('a record dropped: the next record’s transcript no longer follows', async () => {
    const file = await tampered('dropped', { records: (records) => records.slice(1) });
    assert.match(
      await refusal(file),
      joined(
        '',
        /record 1's transcript digest does not follow from the circuit hash and the 0 records before it: the key's /,
        /contribution/,
      ),
    );
  });

  test('a record’s public key changed: its own transcript digest no longer follows', async () => {
    const file = await tampered('changed', {
      records: (records) =>
        records.map((r, i) =>
          i === 1
            ? {
                ...r,
                raw: Buffer.concat([r.raw.subarray(0, 64), records[0]!.raw.subarray(64, 192), r.raw.subarray(192)]),
              }
            : r,
        ),
    });
    assert.match(
      await refusal(file),
      /record 2's transcript digest does not follow from the circuit hash and the 1 record before it/,
    );
  });

  test('records reordered', async () => {
    const file = await tampered('reordered', { records: (records) => [records[1]!, records[0]!, records[2]!] });
    assert.match(await refusal(file), /record 1's transcript digest does not follow/);
  });

  test('a header δ that is not the last record’s', async () => {
    const info = await readZkeyInfo(finalKey());
    const file = await tampered('delta', { headerDelta1: info.mpc.contributions[1]!.deltaAfter });
    assert.match(await refusal(file), /the δ of its header is not the δ its last record \(3\) leaves/);
  });

  test('a coordinate that is not a field element', async () => {
    const q = Buffer.from(BN254_Q.toString(16).padStart(64, '0'), 'hex').reverse();
    const file = await tampered('non-canonical', {
      records: (records) =>
        records.map((r, i) => (i === 0 ? { ...r, raw: Buffer.concat([q, r.raw.subarray(32)]) } : r)),
    });
    assert.match(await refusal(file), /record 1: a point coordinate is not a canonical field element/);
  });

  test('not a zkey, or truncated', async () => {
    const dir = await copyWithoutChains('broken');
    const bytes = await readFile(finalKey());
    await writeFile(path.join(dir, 'final', 'register.zkey'), bytes.subarray(0, bytes.length - 100));
    await writeFile(
      path.join(dir, 'final', 'transact21.zkey'),
      Buffer.concat([Buffer.from('ptau'), bytes.subarray(4)]),
    );
    const evidence = await folderEvidence(dir);
    await assert.rejects(
      readZkeyHistory(evidence.keySource('register', { final: true })),
      (error: Error) =>
        isCoordinatorError(error, 'receipt.history_invalid') && /runs past the end of the file/.test(error.message),
    );
    await assert.rejects(
      readZkeyHistory(evidence.keySource('transact21', { final: true })),
      (error: Error) => isCoordinatorError(error, 'receipt.history_invalid') && /not a zkey/.test(error.message),
    );
  });
});

test('the modules the page runs import nothing of Node', async () => {
  const isomorphic = [
    'receipts-file',
    'receipt-signature',
    'uncompressed-points',
    'range-source',
    'zkey-history',
    'public-transcript',
    'receipt-checker',
    'coordinator-evidence',
  ];
  const seen = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of importSpecifiers(await readFile(file, 'utf8'))) {
      assert.ok(
        !specifier.startsWith('node:') && !['fs', 'path', 'crypto', 'os'].includes(specifier),
        `${path.relative(REPO_ROOT, file)} imports ${specifier}`,
      );
      if (specifier.startsWith('.')) await visit(path.resolve(path.dirname(file), specifier));
    }
  };
  for (const name of isomorphic) await visit(path.join(REPO_ROOT, 'core', 'receipts', `${name}.ts`));
  assert.ok(seen.size > isomorphic.length, 'their own imports were followed too');
});
