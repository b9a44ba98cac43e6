/**
 * Every class of bad link is refused with its own code, and a refused file never changes the head.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { acceptContribution, contributeLocally, verifyCandidate } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { SECTION, type ZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { G1, recordOffset, sectionOffset, tamperedCopy, truncatedCopy } from '../helpers/zkey-tamper.ts';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';

const CIRCUIT = 'register';
let dataDir: string;
let work: string;
let zkeyPath: (circuit: string, index: number) => string;
let valid: string;
let validHash: string;

async function headSnapshot(): Promise<{ entries: number; headIndex: number; headHash: string }> {
  const state = await openCeremony(dataDir);
  const chain = state.chains.get(CIRCUIT)!;
  return {
    entries: state.transcript.entries.length,
    headIndex: chain.headIndex,
    headHash: await hashFile(zkeyPath(CIRCUIT, chain.headIndex)),
  };
}

async function contributeOn(index: number, name: string, circuit = CIRCUIT): Promise<string> {
  const out = path.join(work, `${name}.zkey`);
  await snarkjs.zKey.contribute(zkeyPath(circuit, index), out, name, randomBytes(32).toString('hex'));
  return out;
}

async function expectRefused(file: string, code: ErrorCode): Promise<void> {
  const before = await headSnapshot();
  await assert.rejects(acceptContribution(dataDir, CIRCUIT, file, 'mallory'), (error: unknown) => {
    assert.ok(isCoordinatorError(error), `expected a CoordinatorError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
  assert.deepEqual(await headSnapshot(), before, 'a refused file must not change the head or the transcript');
}

/**
 * A copy of the valid contribution, saved as `name`, with G1 point `to` counted from `start(info)`
 * overwritten by point `from`: another valid point, in the wrong place.
 */
function pointReplaced(name: string, start: (info: ZkeyInfo) => number, to: number, from: number): Promise<string> {
  return tamperedCopy(valid, path.join(work, name), (bytes, info) => {
    const at = start(info);
    bytes.copy(bytes, at + to * G1, at + from * G1, at + (from + 1) * G1);
  });
}

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
  work = await mkdtemp(path.join(tmpdir(), 'refusals-'));
  zkeyPath = (await openCeremony(dataDir)).paths.zkeyPath;
  await contributeLocally(dataDir, CIRCUIT, 'alice');
  await contributeLocally(dataDir, CIRCUIT, 'bob');
  valid = path.join(work, 'valid.zkey');
  validHash = Buffer.from(
    await snarkjs.zKey.contribute(zkeyPath(CIRCUIT, 2), valid, 'carol', randomBytes(32).toString('hex')),
  ).toString('hex');
});

after(() => cleanUp(work, dataDir));

describe('refusals', () => {
  test('a file that is not a zkey', async () => {
    const file = path.join(work, 'noise.zkey');
    await writeFile(file, randomBytes(4096));
    await expectRefused(file, 'zkey.malformed');
  });

  test('a truncated zkey', async () => {
    await expectRefused(await truncatedCopy(valid, path.join(work, 'truncated.zkey'), 100), 'zkey.malformed');
  });

  test('a contribution to another circuit', async () => {
    await expectRefused(await contributeOn(0, 'other-circuit', 'treeUpdate'), 'contribution.wrong_circuit');
  });

  test('a contribution built on an older head', async () => {
    await expectRefused(await contributeOn(1, 'stale'), 'contribution.stale');
  });

  test('an older link of the chain re-uploaded', async () => {
    await expectRefused(zkeyPath(CIRCUIT, 1), 'contribution.stale');
  });

  test('the head itself re-uploaded', async () => {
    await expectRefused(zkeyPath(CIRCUIT, 2), 'contribution.no_new_contribution');
  });

  test('two new contributions at once', async () => {
    const twice = path.join(work, 'twice.zkey');
    await snarkjs.zKey.contribute(valid, twice, 'greedy', randomBytes(32).toString('hex'));
    await expectRefused(twice, 'contribution.multiple_new_contributions');
  });

  test('a contribution that leaves delta unchanged', async () => {
    const file = await tamperedCopy(valid, path.join(work, 'same-delta.zkey'), (bytes, info) => {
      // The new record claims the head's delta as its result (a secret of 1).
      const head = info.mpc.contributions[1]!.deltaAfter;
      head.copy(bytes, recordOffset(info, 2));
    });
    await expectRefused(file, 'contribution.delta_unchanged');
  });

  test('a header whose delta is not the contribution result', async () => {
    const file = await tamperedCopy(valid, path.join(work, 'header-delta.zkey'), (bytes, info) => {
      const headerDelta1 = sectionOffset(info, SECTION.grothHeader) + 84 + 2 * G1 + 2 * 128;
      info.mpc.contributions[1]!.deltaAfter.copy(bytes, headerDelta1);
    });
    await expectRefused(file, 'contribution.delta_mismatch');
  });

  test('an L point replaced by another valid point', async () => {
    const file = await pointReplaced('bad-l.zkey', (info) => sectionOffset(info, SECTION.l), 0, 1);
    await expectRefused(file, 'contribution.l_section_invalid');
  });

  test('an H point replaced by another valid point', async () => {
    const file = await pointReplaced('bad-h.zkey', (info) => sectionOffset(info, SECTION.h), 3, 5);
    await expectRefused(file, 'contribution.h_section_invalid');
  });

  test('a tampered header (alpha replaced)', async () => {
    const alpha = (info: ZkeyInfo) => sectionOffset(info, SECTION.grothHeader) + 84;
    const file = await pointReplaced('bad-alpha.zkey', alpha, 0, 1);
    await expectRefused(file, 'contribution.header_mismatch');
  });

  test('a tampered IC section', async () => {
    const file = await pointReplaced('bad-ic.zkey', (info) => sectionOffset(info, SECTION.ic), 0, 1);
    await expectRefused(file, 'contribution.header_mismatch');
  });

  test('a forged proof of knowledge', async () => {
    // g1_sx := g1_s: still a valid point, but no longer s·x for the key that moved delta.
    const file = await pointReplaced('bad-pok.zkey', (info) => recordOffset(info, 2), 2, 1);
    await expectRefused(file, 'contribution.invalid_proof_of_knowledge');
  });

  test('a beacon contribution from a contributor', async () => {
    const file = path.join(work, 'beacon.zkey');
    await snarkjs.zKey.beacon(zkeyPath(CIRCUIT, 2), file, 'not-the-coordinator', 'abcd', 10);
    await expectRefused(file, 'contribution.unexpected_type');
  });
});

describe('a valid contribution', () => {
  test('`ceremony verify` accepts it, prints its snarkjs contribution hash and changes nothing', async () => {
    const before = await headSnapshot();
    const result = await runCli(['verify', CIRCUIT, valid, '--data', dataDir]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), validHash);
    assert.deepEqual(await headSnapshot(), before);
  });

  test('`ceremony verify` exits non-zero with the code for a bad file', async () => {
    const result = await runCli(['verify', CIRCUIT, zkeyPath(CIRCUIT, 1), '--data', dataDir]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /error \[contribution\.stale\]/);
  });

  test('it becomes the head, with the hash snarkjs printed', async () => {
    assert.equal((await verifyCandidate(dataDir, CIRCUIT, valid)).contributionHash, validHash);
    const accepted = await acceptContribution(dataDir, CIRCUIT, valid, 'carol');
    assert.equal(accepted.index, 3);
    assert.equal(accepted.contributionHash, validHash);
    const state = await openCeremony(dataDir);
    const chain = state.chains.get(CIRCUIT)!;
    assert.equal(chain.headIndex, 3);
    assert.equal(chain.head?.type === 'contribution' && chain.head.contributionHash, validHash);
    assert.equal(await hashFile(zkeyPath(CIRCUIT, 3)), await hashFile(valid));
    assert.equal(
      await snarkjs.zKey.verifyFromInit(zkeyPath(CIRCUIT, 0), state.config.ptauPath, zkeyPath(CIRCUIT, 3)),
      true,
    );
  });
});
