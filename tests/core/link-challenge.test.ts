/**
 * One MSM per link: verifyLinkFromHead with the coordinator's secret circuit key, given the head's cached
 * combination, reads only the candidate's L and H, decides as the two-MSM path does (same
 * combinations, same hashes), and still refuses every kind of tampered L or H with its code. The
 * cache returns an entry only for the file hash and circuit key it was written for; the scalar
 * stream is the same whether a section is streamed in chunks or read at once.
 *
 * A candidate whose points at infinity are not exactly the head's is refused with its own code
 * before any sum with the key's scalars (a point off the curve elsewhere in it is not what is
 * reported), on the cached path and the two-MSM one. The scalar stream and the cache's MAC use two
 * subkeys of the circuit key, never the key itself; a cache entry of the earlier version is a miss.
 *
 * Then verifyRequest as both verifiers run it, on a real data folder: the seed is created once in
 * state/ with mode 0600, the head's and candidate's combinations are cached under their file
 * hashes, the next link uses the cache (a head whose H was wiped still verifies, which only the
 * cached path can do), an entry copied under another file hash is ignored, and with the cache
 * deleted a good link is accepted and a bad one refused. The candidate's sums a request carries
 * stand in for its L and H (a candidate with a changed L passes with the good file's sums sealed
 * for it), and sums that do not open (none, another file's or circuit's, malformed) are not used.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import {
  LINK_SCALAR_BYTES,
  linkCombinationOf,
  verifyLinkFromHead,
} from '../../core/link-check/verify-link-from-head.ts';
import {
  CHALLENGE_SEED_FILE,
  challengeScalars,
  circuitChallengeKey,
  linkCacheMacKey,
  linkChallengeSeed,
  linkScalarKey,
  stateDirFor,
} from '../../core/link-check/link-challenge.ts';
import {
  LINK_CACHE_DIR,
  readCachedCombination,
  sealCandidateSums,
  writeCachedCombination,
  type LinkCombination,
} from '../../core/link-check/link-combination-cache.ts';
import { StreamedCandidateSums } from '../../core/link-check/streamed-candidate-sums.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';
import { verifyRequest } from '../../worker/verify-request.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { fileIdentity, serialiseFileIdentity } from '../../core/fs/file-identity.ts';
import type { VerificationRequest } from '../../core/verifier-contract/verifier-contract.ts';
import { devPtau, PROJECT_DATA_DIR } from '../fixtures/ceremony-fixture.ts';
import { G1, sectionOf, sectionOffset, splitSections, tamperedCopy } from '../helpers/zkey-tamper.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { verificationFixture, type VerificationFixture } from '../worker/verification-fixture.ts';

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
let dir: string;
let curve: Bn128Curve;
const key: Record<string, string> = {};
const circuitKey = circuitChallengeKey(randomBytes(32), 'register');
/** Combinations under circuitKey, from the two-MSM path. */
const combination: Record<string, LinkCombination> = {};

function doubled(bytes: Buffer, at: number): void {
  const point = curve.G1.fromRprLEM(bytes, at);
  curve.G1.toRprLEM(bytes, at, curve.G1.toAffine(curve.G1.add(point, point)));
}

async function refusedWith(code: ErrorCode, work: Promise<unknown>): Promise<void> {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(isCoordinatorError(error), `expected a CoordinatorError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

before(async () => {
  const ptau = await devPtau();
  dir = await mkdtemp(path.join(tmpdir(), 'link-challenge-'));
  curve = await getBn128();
  const r1cs = path.join(PROJECT_DATA_DIR, 'circuits', 'register.r1cs');
  const at = (name: string) => (key[name] = path.join(dir, `${name}.zkey`));
  await snarkjs.zKey.newZKey(r1cs, ptau, at('z0'), silent);
  await snarkjs.zKey.contribute(key.z0!, at('z1'), 'alice', 'entropy one', silent);
  await snarkjs.zKey.contribute(key.z1!, at('z2'), 'bob', 'entropy two', silent);
});

after(() => cleanUp(dir));

describe('verifyLinkFromHead with a circuit key', () => {
  it('two MSMs and one (the head cached) agree on every link', async () => {
    const first = await verifyLinkFromHead(key.z0!, key.z1!, { challenge: { key: circuitKey } });
    assert.ok(first.headCombination);
    combination.z0 = first.headCombination;
    combination.z1 = first.combination;
    const uncached = await verifyLinkFromHead(key.z1!, key.z2!, { challenge: { key: circuitKey } });
    // The head's combination computed now is the one cached when it was the candidate.
    assert.deepEqual(uncached.headCombination, combination.z1);
    const cached = await verifyLinkFromHead(key.z1!, key.z2!, { challenge: { key: circuitKey, head: combination.z1 } });
    assert.equal(cached.headCombination, undefined);
    assert.deepEqual(cached.combination, uncached.combination);
    assert.equal(cached.contributionHash, uncached.contributionHash);
    combination.z2 = cached.combination;
    // Fresh random scalars (the CLI) give other combinations but the same verdict.
    const fresh = await verifyLinkFromHead(key.z1!, key.z2!);
    assert.equal(fresh.contributionHash, cached.contributionHash);
    assert.notDeepEqual(fresh.combination, cached.combination);
  });

  it('linkCombinationOf computes, from a file alone, the combination the link check leaves for it', async () => {
    // As the head of a link (contribution 0, never a candidate) and as a candidate.
    assert.deepEqual(await linkCombinationOf(key.z0!, circuitKey), combination.z0);
    assert.deepEqual(await linkCombinationOf(key.z1!, circuitKey), combination.z1);
    // Under another circuit's key, another combination.
    const other = await linkCombinationOf(key.z1!, circuitChallengeKey(randomBytes(32), 'register'));
    assert.notDeepEqual(other.l, combination.z1!.l);
    assert.deepEqual(other.lIdentities, combination.z1!.lIdentities);
    // And it is what a link on that head needs: the cached path takes it as the head's.
    const link = await verifyLinkFromHead(key.z0!, key.z1!, {
      challenge: { key: circuitKey, head: await linkCombinationOf(key.z0!, circuitKey) },
    });
    assert.equal(link.headCombination, undefined);
    assert.deepEqual(link.combination, combination.z1);
  });

  it(
    'on the cached path reads only the candidate: a head whose H is wiped ' +
      'still verifies, without the cache it does not',
    async () => {
      const hollow = await tamperedCopy(key.z1!, path.join(dir, 'z1-hollow.zkey'), (bytes, info) => {
        const { offset, size } = info.sections.get(SECTION.h)!;
        bytes.fill(0, offset, offset + size);
      });
      const cached = await verifyLinkFromHead(hollow, key.z2!, {
        challenge: { key: circuitKey, head: combination.z1! },
      });
      assert.deepEqual(cached.combination, combination.z2);
      await assert.rejects(verifyLinkFromHead(hollow, key.z2!, { challenge: { key: circuitKey } }), isCoordinatorError);
    },
  );

  describe('on the cached path refuses', () => {
    const cachedCheck = (file: string) =>
      verifyLinkFromHead(key.z1!, file, { challenge: { key: circuitKey, head: combination.z1! } });
    const edit = (
      name: string,
      change: (bytes: Buffer, info: Parameters<Parameters<typeof tamperedCopy>[2]>[1]) => void,
    ) => tamperedCopy(key.z2!, path.join(dir, `${name}.zkey`), change);

    it('a tampered point in L', async () => {
      const file = await edit('l-point', (bytes, info) => doubled(bytes, sectionOffset(info, SECTION.l) + 2 * G1));
      await refusedWith('contribution.l_section_invalid', cachedCheck(file));
    });
    it('a tampered point in H', async () => {
      const file = await edit('h-point', (bytes, info) => doubled(bytes, sectionOffset(info, SECTION.h) + 5 * G1));
      await refusedWith('contribution.h_section_invalid', cachedCheck(file));
    });
    it('a point replaced by another point of its section', async () => {
      const file = await edit('l-replaced', (bytes, info) => {
        const l = sectionOffset(info, SECTION.l);
        bytes.copy(bytes, l, l + G1, l + 2 * G1);
      });
      await refusedWith('contribution.l_section_invalid', cachedCheck(file));
    });
    it('a scaled section (every point of H doubled)', async () => {
      const file = await edit('h-scaled', (bytes, info) => {
        const { offset, size } = info.sections.get(SECTION.h)!;
        for (let p = offset; p < offset + size; p += G1) doubled(bytes, p);
      });
      await refusedWith('contribution.h_section_invalid', cachedCheck(file));
    });
    it('a point off the curve', async () => {
      const file = await edit('h-off-curve', (bytes, info) => {
        bytes[sectionOffset(info, SECTION.h) + 4 * G1 + 32]! ^= 1;
      });
      await refusedWith('contribution.point_not_on_curve', cachedCheck(file));
    });
    it(
      'a candidate with a point at infinity where the head has none, before ' +
        'any sum (an off-curve point in it is not what is reported)',
      async () => {
        const file = await edit('l-identity', (bytes, info) => {
          bytes.fill(0, sectionOffset(info, SECTION.l) + 2 * G1, sectionOffset(info, SECTION.l) + 3 * G1);
          bytes[sectionOffset(info, SECTION.h) + 4 * G1 + 32]! ^= 1;
        });
        await refusedWith('contribution.identity_pattern_changed', cachedCheck(file));
        await refusedWith(
          'contribution.identity_pattern_changed',
          verifyLinkFromHead(key.z1!, file, { challenge: { key: circuitKey } }),
        );
        await refusedWith('contribution.identity_pattern_changed', verifyLinkFromHead(key.z1!, file));
      },
    );
    it('a candidate without the point at infinity the head has (the head read from its file)', async () => {
      const head = await tamperedCopy(key.z1!, path.join(dir, 'z1-h-identity.zkey'), (bytes, info) => {
        bytes.fill(0, sectionOffset(info, SECTION.h) + 7 * G1, sectionOffset(info, SECTION.h) + 8 * G1);
      });
      await assert.rejects(verifyLinkFromHead(head, key.z2!, { challenge: { key: circuitKey } }), (error: unknown) => {
        assert.ok(isCoordinatorError(error, 'contribution.identity_pattern_changed'), String(error));
        assert.match(
          error.message,
          /^the H section holds the point at infinity at other places than the chain head does/,
        );
        return true;
      });
    });
    it("another file's combination given as the head's", () =>
      refusedWith(
        'contribution.l_section_invalid',
        verifyLinkFromHead(key.z1!, key.z2!, { challenge: { key: circuitKey, head: combination.z0! } }),
      ));
  });
});

describe('the challenge scalars and the cache', () => {
  it('give a chunk the scalars of its place in the whole section, distinct per section and circuit', () => {
    const whole = challengeScalars(circuitKey, SECTION.l, 0, 1000, LINK_SCALAR_BYTES);
    assert.deepEqual(
      challengeScalars(circuitKey, SECTION.l, 136, 500, LINK_SCALAR_BYTES),
      whole.subarray(136 * 8, 636 * 8),
    );
    assert.deepEqual(challengeScalars(circuitKey, SECTION.l, 3, 10, LINK_SCALAR_BYTES), whole.subarray(24, 104));
    assert.notDeepEqual(challengeScalars(circuitKey, SECTION.h, 0, 1000, LINK_SCALAR_BYTES), whole);
    const other = circuitChallengeKey(randomBytes(32), 'treeUpdate');
    assert.notDeepEqual(challengeScalars(other, SECTION.l, 0, 1000, LINK_SCALAR_BYTES), whole);
  });

  it('come from two subkeys of the circuit key: the ChaCha20 stream and the cache MAC never use the key itself', () => {
    const scalarKey = linkScalarKey(circuitKey);
    const macKey = linkCacheMacKey(circuitKey);
    assert.notDeepEqual(scalarKey, macKey);
    assert.notDeepEqual(scalarKey, circuitKey);
    const stream = (k: Uint8Array): Buffer => {
      const iv = Buffer.alloc(16);
      iv.writeUInt32LE(SECTION.l, 4);
      return createCipheriv('chacha20', k, iv).update(Buffer.alloc(80));
    };
    const scalars = Buffer.from(challengeScalars(circuitKey, SECTION.l, 0, 10, LINK_SCALAR_BYTES));
    assert.deepEqual(scalars, stream(scalarKey));
    assert.notDeepEqual(scalars, stream(circuitKey), 'the circuit key itself keys no stream');
  });

  it('reads an entry of the earlier version (no identity digests, MAC under the circuit key) as a miss', async () => {
    const stateDir = path.join(dir, 'state-v1');
    const fileHash = await hashFile(key.z1!);
    const { l, h } = combination.z1!;
    const v1Mac = createHmac('sha256', circuitKey)
      .update(`link combination v1\0${fileHash}\0`)
      .update(l)
      .update(h)
      .digest();
    await mkdir(path.join(stateDir, LINK_CACHE_DIR), { recursive: true });
    await writeFile(
      path.join(stateDir, LINK_CACHE_DIR, `${fileHash}.bin`),
      Buffer.concat([Buffer.from([1]), l, h, v1Mac]),
    );
    assert.equal(await readCachedCombination(stateDir, circuitKey, fileHash), undefined);
    await writeCachedCombination(stateDir, circuitKey, fileHash, combination.z1!);
    assert.deepEqual(
      await readCachedCombination(stateDir, circuitKey, fileHash),
      combination.z1,
      'rewritten in the current version',
    );
  });

  it('returns an entry only for the file hash and circuit key it was written for', async () => {
    const stateDir = path.join(dir, 'state');
    const [h1, h2] = [await hashFile(key.z1!), await hashFile(key.z2!)];
    await writeCachedCombination(stateDir, circuitKey, h1, combination.z1!);
    assert.deepEqual(await readCachedCombination(stateDir, circuitKey, h1), combination.z1);
    assert.equal(await readCachedCombination(stateDir, circuitKey, h2), undefined, 'nothing cached for z2');
    await copyFile(path.join(stateDir, LINK_CACHE_DIR, `${h1}.bin`), path.join(stateDir, LINK_CACHE_DIR, `${h2}.bin`));
    assert.equal(await readCachedCombination(stateDir, circuitKey, h2), undefined, "z1's entry under z2's name");
    assert.equal(
      await readCachedCombination(stateDir, circuitChallengeKey(randomBytes(32), 'register'), h1),
      undefined,
      'another seed',
    );
    assert.equal(await readCachedCombination(stateDir, circuitKey, '../../etc/passwd'), undefined);
    assert.equal((await stat(path.join(stateDir, LINK_CACHE_DIR, `${h1}.bin`))).mode & 0o777, 0o600);
  });
});

describe('verifyRequest with the coordinator challenge (both verifiers)', () => {
  let fixture: VerificationFixture;
  let stateDir: string;
  let headHash: string;
  const requestFor = (
    id: string,
    headPath: string,
    candidate: string,
    hashes: { head: string; candidate: string },
  ): VerificationRequest => ({
    ...fixture.request(id, 'register', candidate),
    headZkeyPath: headPath,
    challenge: { stateDir, headFileHash: hashes.head, candidateFileHash: hashes.candidate },
  });
  const cacheFiles = async (): Promise<string[]> =>
    (await readdir(path.join(stateDir, LINK_CACHE_DIR)).catch(() => [])).sort();

  before(async () => {
    fixture = await verificationFixture(['register']);
    stateDir = stateDirFor(fixture.dataDir);
    const chain = (await openCeremony(fixture.dataDir)).chains.get('register')!;
    headHash = chain.head!.fileHash; // as the coordinator sends it: from the transcript
  });
  after(() => fixture?.cleanup());

  it('creates the seed once (0600), caches head and candidate, then verifies the next link with one MSM', async () => {
    // The fixture's local contribution left entries of its own: this test starts from none.
    await rm(path.join(stateDir, LINK_CACHE_DIR), { recursive: true, force: true });
    const c1 = await fixture.candidate('register', 'alice');
    const c1Hash = await hashFile(c1.path);
    const first = await verifyRequest(
      requestFor('c1', fixture.headPath('register'), c1.path, { head: headHash, candidate: c1Hash }),
    );
    assert.deepEqual(first, {
      contributionId: 'c1',
      status: 'valid',
      contributionHash: c1.hash,
      recordedName: 'alice',
    });
    const seedFile = path.join(stateDir, CHALLENGE_SEED_FILE);
    assert.equal((await stat(seedFile)).mode & 0o777, 0o600);
    const seed = await readFile(seedFile);
    assert.equal(seed.length, 32);
    assert.deepEqual(await cacheFiles(), [`${headHash}.bin`, `${c1Hash}.bin`].sort());

    // c1 becomes the head; a copy with H wiped verifies only if its combination comes from the cache.
    const c1Head = path.join(fixture.work, 'c1-head.zkey');
    await copyFile(c1.path, c1Head);
    const c2 = path.join(fixture.work, 'c2.zkey');
    const c2Hash = Buffer.from(
      await snarkjs.zKey.contribute(c1Head, c2, 'bob', randomBytes(32).toString('hex'), silent),
    ).toString('hex');
    const hollowHead = await tamperedCopy(c1Head, path.join(fixture.work, 'c1-hollow.zkey'), (bytes, info) => {
      const { offset, size } = info.sections.get(SECTION.h)!;
      bytes.fill(0, offset, offset + size);
    });
    const hashes = { head: c1Hash, candidate: await hashFile(c2) };
    const second = await verifyRequest(requestFor('c2', hollowHead, c2, hashes));
    assert.equal(second.status, 'valid');
    assert.equal(second.status === 'valid' && second.contributionHash, c2Hash);
    assert.deepEqual(await readFile(seedFile), seed, 'the seed is never replaced');

    // An entry copied under the head's hash from another file is not used (it would refuse this
    // good link): the head is read again, and its right combination cached again.
    const entries = path.join(stateDir, LINK_CACHE_DIR);
    await copyFile(path.join(entries, `${hashes.candidate}.bin`), path.join(entries, `${c1Hash}.bin`));
    const third = await verifyRequest(requestFor('c2-again', c1Head, c2, hashes));
    assert.equal(third.status, 'valid');
    assert.equal(
      (await verifyRequest(requestFor('c2-hollow', hollowHead, c2, hashes))).status,
      'valid',
      'the right entry is back',
    );

    // A restart with the cache deleted: two MSMs, the same verdicts.
    await rm(entries, { recursive: true });
    assert.equal((await verifyRequest(requestFor('c2-hollow-uncached', hollowHead, c2, hashes))).status, 'invalid');
    assert.equal((await verifyRequest(requestFor('c2-uncached', c1Head, c2, hashes))).status, 'valid');
    const bad = await tamperedCopy(c2, path.join(fixture.work, 'c2-bad.zkey'), (bytes, info) =>
      doubled(bytes, sectionOffset(info, SECTION.l)),
    );
    const refused = await verifyRequest(
      requestFor('c2-bad', c1Head, bad, { head: c1Hash, candidate: await hashFile(bad) }),
    );
    assert.equal(refused.status, 'invalid');
    assert.equal(refused.status === 'invalid' && refused.code, 'contribution.l_section_invalid');
    assert.deepEqual(
      await cacheFiles(),
      [`${c1Hash}.bin`, `${hashes.candidate}.bin`].sort(),
      'a refused candidate is never cached',
    );
  });

  it('compares fixed sections by the hashes it is given, while the file is the one they were taken of', async () => {
    const headPath = fixture.headPath('register');
    const head = await hashKeyFile(headPath, 'the head');
    const good = await fixture.candidate('register', 'carol');
    // The candidate's A section changed (its first point doubled): only the structure check sees it.
    const bad = await tamperedCopy(good.path, path.join(fixture.work, 'a-changed.zkey'), (bytes, info) =>
      doubled(bytes, sectionOffset(info, SECTION.a)),
    );
    const request = async (id: string, file: string, candidate: Record<string, string>) => ({
      ...requestFor(id, headPath, file, { head: headHash, candidate: await hashFile(file) }),
      sectionHashes: {
        head: head.sectionHashes,
        candidate,
        candidateIdentity: serialiseFileIdentity(await fileIdentity(file)),
      },
    });
    const goodHashes = (await hashKeyFile(good.path, 'good')).sectionHashes;
    assert.equal((await verifyRequest(await request('h-good', good.path, goodHashes))).status, 'valid');
    const refused = await verifyRequest(await request('h-bad', bad, (await hashKeyFile(bad, 'bad')).sectionHashes));
    assert.equal(refused.status === 'invalid' && refused.code, 'contribution.header_mismatch');
    // The hashes are what decides, not the bytes: given the head's own, the changed A passes...
    const lying = await request('h-lie', bad, head.sectionHashes);
    assert.equal((await verifyRequest(lying)).status, 'valid');
    // ...but only while the file is the one they were taken of: once it is written again, the bytes decide.
    await writeFile(bad, await readFile(bad));
    const stale = await verifyRequest({ ...lying, contributionId: 'h-stale' });
    assert.equal(stale.status === 'invalid' && stale.code, 'contribution.header_mismatch');
  });

  it('adds the sums the request carries instead of reading L and H; sums that do not open are not used', async () => {
    const headPath = fixture.headPath('register');
    const good = await fixture.candidate('register', 'dave');
    // L's first point doubled: refused whenever L is read, accepted only when the good file's sums stand in for it.
    const bad = await tamperedCopy(good.path, path.join(fixture.work, 'l-doubled.zkey'), (bytes, info) =>
      doubled(bytes, sectionOffset(info, SECTION.l)),
    );
    const badHash = await hashFile(bad);
    const seed = await linkChallengeSeed(stateDir);
    const registerKey = circuitChallengeKey(seed, 'register');
    // The good file's sums, as the coordinator's intake makes them while a delta arrives.
    const summing = await StreamedCandidateSums.start(registerKey, headPath);
    const sections = splitSections(await readFile(good.path));
    for (const id of [SECTION.l, SECTION.h]) summing.add(id, 0, sectionOf(sections, id).data);
    const sums = await summing.result();
    assert.ok(sums, summing.stopped);
    const sealed = (fileHash: string, circuitKey = registerKey) =>
      sealCandidateSums(circuitKey, fileHash, sums).toString('base64');
    const carrying = (id: string, candidateSums?: string): VerificationRequest => {
      const request = requestFor(id, headPath, bad, { head: headHash, candidate: badHash });
      return { ...request, challenge: { ...request.challenge!, ...(candidateSums ? { candidateSums } : {}) } };
    };
    const used = await verifyRequest(carrying('s-used', sealed(badHash)));
    assert.equal(used.status, 'valid', 'L was not read: the sums stood in for it');
    const unused: Array<[string, string | undefined]> = [
      ['s-none', undefined],
      ['s-other-file', sealed(await hashFile(good.path))],
      ['s-other-circuit', sealed(badHash, circuitChallengeKey(seed, 'other'))],
      ['s-malformed', Buffer.from('not sums').toString('base64')],
    ];
    for (const [id, candidateSums] of unused) {
      const refused = await verifyRequest(carrying(id, candidateSums));
      assert.equal(refused.status === 'invalid' && refused.code, 'contribution.l_section_invalid', id);
    }
    // Without sums a good link verifies as ever: L and H read and summed here.
    const plain = requestFor('s-plain', headPath, good.path, { head: headHash, candidate: await hashFile(good.path) });
    assert.equal((await verifyRequest(plain)).status, 'valid');
  });
});
