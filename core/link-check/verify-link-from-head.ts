/**
 * Verification of one link from its head alone (incremental): is NEXT a valid contribution on
 * PREV, an already verified head? Needs neither the r1cs, the ptau nor contribution 0; costs at
 * most two multi-exponentiations with short scalars over L‖H and a handful of pairings, whatever
 * the chain's length. The coordinator's verifiers, `ceremony contribute`, `verify-link` and `audit`
 * all run it; verify-link-from-init.ts is the slower check from contribution 0 through snarkjs.
 *
 * Checked in this order: the structure (checkLinkStructure), the new record's proof of knowledge,
 * δ in G2 against δ in G1, then L and H: NEXT's points at infinity exactly PREV's, every point of
 * NEXT on the curve, and one random linear combination of L‖H under δ on both sides.
 *
 * Invariants: PREV is trusted as verified and not re-checked; every refusal is a CoordinatorError
 * with a stable code, and the refusal reported does not depend on which work finished first; no
 * sum with the coordinator's secret scalars starts before NEXT's points at infinity are known to be
 * PREV's; nothing derived from those scalars leaves the verdict but the combinations to cache.
 * What is checked, why 64-bit scalars and fixed secret scalars are sound, and why the points at
 * infinity come first: docs/link-check.md.
 */
import { createHash, randomFillSync, timingSafeEqual } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import type { Bn128Curve, CurveGroup } from 'ffjavascript';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { contributionHash } from '../zkey/contribution-hash.ts';
import { CONTRIBUTION_TYPE, readZkeyInfo, SECTION, type ContributionRecord, type ZkeyInfo } from '../zkey/zkey-file.ts';
import { checkLinkStructure, type KnownSectionHashes, type LinkExpectation } from './check-link-structure.ts';
import type { VerifiedLink } from './verify-link-from-init.ts';
import { challengeScalars } from './link-challenge.ts';
import type { CandidateSums, LinkCombination } from './link-combination-cache.ts';
import { BN254_R } from '../crypto/bn254-moduli.ts';
import { hashToG2, rngFromBeacon } from '../crypto/snarkjs-rng.ts';
import { readExactlyInto, ShortReadError } from '../binfile/read-exactly.ts';
import {
  addAffineParts,
  g1CheckedMultiExpOrFallback,
  g1MultiExpOrFallback,
  startMultiExpThreads,
  type CheckedSum,
} from '../kernel/multi-exp.ts';
import { coordinatesCanonical } from '../zkey/point-checks.ts';
import { IdentityPatternDigest, identityIndices } from './identity-pattern.ts';

export interface VerifyLinkFromHeadOptions {
  /** Kind of record NEXT must add. Default: a random (non-beacon) contribution. */
  expect?: LinkExpectation;
  /** How refusals name PREV and NEXT (default: their paths); a server passes roles, never its paths. */
  labels?: { prev: string; next: string };
  /**
   * Scalars from this secret circuit key instead of fresh randomness (the coordinator). With
   * `head`, PREV's combination under the same key (cached when PREV was verified), PREV's L and H
   * are not read: one MSM instead of two. With `next`, NEXT's sums under the same key, made by the
   * coordinator as NEXT's upload arrived (its points checked, its points at infinity found where
   * PREV has them), NEXT's L and H are not read either: no MSM at all.
   */
  challenge?: { key: Uint8Array; head?: LinkCombination; next?: CandidateSums };
  /**
   * Start the sums over L and H while the structure is still being checked (the fixed sections
   * compared byte for byte), when both files' L and H have the same sizes. A structure refusal then
   * waits for the sums: right for a command verifying one link (`ceremony verify-link`), wrong for
   * a server, where it would make every malformed upload cost a full check. Default false.
   */
  sumsDuringStructureCheck?: boolean;
  /** Section hashes of both files the caller holds for their very bytes (check-link-structure.ts). */
  sectionHashes?: KnownSectionHashes;
}

/** A verified link, with NEXT's combination under the scalars used (worth caching only under a key). */
export interface LinkVerdict extends VerifiedLink {
  combination: LinkCombination;
  /** PREV's combination, when it was computed here (not given by options.challenge.head). */
  headCombination?: LinkCombination;
}

/**
 * Bytes of each random scalar of the L‖H check: a cheating L or H passes with probability at most
 * 2^-64 per check (docs/link-check.md, why 64-bit scalars are enough).
 */
export const LINK_SCALAR_BYTES = 8;

/**
 * Points per streamed chunk (16 MiB of bases per file; a 2^18 circuit's H in one chunk). Each
 * thread of an MSM call sums its 2^12 buckets once per window whatever its share of the chunk:
 * with 2^16 points a thread, that costs about a quarter of the work of the points themselves, with
 * 2^17 (this chunk on two cores) an eighth.
 */
const CHUNK_POINTS = 1 << 18;
const N8 = 32;
const G1_SIZE = 2 * N8;

function refuse(code: ErrorCode, message: string): never {
  throw new CoordinatorError(code, message);
}

/** Decodes a G1 point of the header or the record; refuses one off the curve. */
function g1Point(curve: Bn128Curve, lem: Buffer, what: string): Uint8Array {
  const point = curve.G1.fromRprLEM(lem, 0);
  if (!coordinatesCanonical(lem, 0, 2) || !curve.G1.isValid(point)) {
    refuse('contribution.point_not_on_curve', `${what} is not a point of the curve`);
  }
  return point;
}

/** Decodes a G2 point; G2 has a large cofactor, so also refuses one outside the order-r subgroup. */
function g2Point(curve: Bn128Curve, lem: Buffer, what: string): Uint8Array {
  const point = curve.G2.fromRprLEM(lem, 0);
  if (
    !coordinatesCanonical(lem, 0, 4) ||
    !curve.G2.isValid(point) ||
    !curve.G2.isZero(curve.G2.timesScalar(point, BN254_R))
  ) {
    refuse('contribution.point_not_on_curve', `${what} is not a point of the curve's order-r subgroup`);
  }
  return point;
}

function uncompressed(group: CurveGroup, point: Uint8Array): Uint8Array {
  const out = new Uint8Array(group.F.n8 * 2);
  group.toRprUncompressed(out, 0, point);
  return out;
}

/** The record fields snarkjs hashes into the transcript of every later contribution. */
function hashPubKey(curve: Bn128Curve, hash: ReturnType<typeof createHash>, record: ContributionRecord): void {
  hash.update(uncompressed(curve.G1, curve.G1.fromRprLEM(record.deltaAfter, 0)));
  hash.update(uncompressed(curve.G1, curve.G1.fromRprLEM(record.g1S, 0)));
  hash.update(uncompressed(curve.G1, curve.G1.fromRprLEM(record.g1Sx, 0)));
  hash.update(uncompressed(curve.G2, curve.G2.fromRprLEM(record.g2Spx, 0)));
  hash.update(record.transcript);
}

async function sameRatio(
  curve: Bn128Curve,
  g1s: Uint8Array,
  g1sx: Uint8Array,
  g2s: Uint8Array,
  g2sx: Uint8Array,
): Promise<boolean> {
  if (curve.G1.isZero(g1s) || curve.G1.isZero(g1sx) || curve.G2.isZero(g2s) || curve.G2.isZero(g2sx)) return false;
  return curve.pairingEq(g1s, g2sx, curve.G1.neg(g1sx), g2s);
}

/**
 * The proof of knowledge of `record` on the key `prev` (its history and δ: the records before it
 * and the δ they reached), and a beacon record's key. `what` names the record in refusals.
 */
export async function checkProofOfKnowledge(
  curve: Bn128Curve,
  prev: Pick<ZkeyInfo, 'mpc'> & { header: Pick<ZkeyInfo['header'], 'delta1'> },
  record: ContributionRecord,
  what = 'the new contribution',
): Promise<void> {
  const pok = (why: string): never =>
    refuse('contribution.invalid_proof_of_knowledge', `${what}'s proof of knowledge does not verify: ${why}`);
  const g1s = g1Point(curve, record.g1S, `g1_s of ${what}`);
  const g1sx = g1Point(curve, record.g1Sx, `g1_sx of ${what}`);
  const deltaAfter = g1Point(curve, record.deltaAfter, `deltaAfter of ${what}`);
  const g2spx = g2Point(curve, record.g2Spx, `g2_spx of ${what}`);
  if (curve.G1.isZero(g1s) || curve.G1.isZero(g1sx) || curve.G1.isZero(deltaAfter) || curve.G2.isZero(g2spx)) {
    pok('its public key contains the point at infinity');
  }

  const transcript = createHash('blake2b512').update(prev.mpc.csHash);
  for (const earlier of prev.mpc.contributions) hashPubKey(curve, transcript, earlier);
  transcript.update(uncompressed(curve.G1, g1s)).update(uncompressed(curve.G1, g1sx));
  if (!transcript.digest().equals(record.transcript))
    pok('its transcript digest is not the hash of the history and its key');

  const g2sp = hashToG2(curve, record.transcript);
  if (!(await sameRatio(curve, g1s, g1sx, g2sp, g2spx)))
    pok('g1_s, g1_sx and g2_sp, g2_spx do not have the same ratio');
  const prevDelta = curve.G1.fromRprLEM(prev.header.delta1, 0);
  if (!(await sameRatio(curve, prevDelta, deltaAfter, g2sp, g2spx)))
    pok('the new delta is not the previous delta raised to the proven secret');

  if (record.type === CONTRIBUTION_TYPE.beacon) {
    const { beaconHash, numIterationsExp } = record;
    if (!beaconHash || numIterationsExp === undefined)
      return pok('the beacon record lacks its beacon or iteration count');
    const rng = rngFromBeacon(beaconHash, numIterationsExp);
    const secret = curve.Fr.fromRng(rng);
    const expectedG1s = curve.G1.toAffine(curve.G1.fromRng(rng));
    const expectedG1sx = curve.G1.toAffine(curve.G1.timesFr(expectedG1s, secret));
    if (!curve.G1.eq(expectedG1s, g1s) || !curve.G1.eq(expectedG1sx, g1sx))
      pok('its key is not the one the beacon derives');
  }
}

export async function checkDelta2(curve: Bn128Curve, next: Pick<ZkeyInfo, 'header'>): Promise<Uint8Array> {
  const delta2 = g2Point(curve, next.header.delta2, 'delta2 of the key');
  const delta1 = curve.G1.fromRprLEM(next.header.delta1, 0);
  if (!(await sameRatio(curve, curve.G1.g, delta1, curve.G2.g, delta2))) {
    refuse('contribution.delta_mismatch', 'delta in G2 of the header is not delta in G1 of the header');
  }
  return delta2;
}

async function readChunk(handle: FileHandle, position: number, length: number, what: string): Promise<Uint8Array> {
  // A plain Uint8Array with its own buffer: ffjavascript posts slices of it to its workers, and a
  // Buffer's slices would drag the whole backing store along.
  const bytes = new Uint8Array(length);
  try {
    await readExactlyInto(handle, bytes, position);
  } catch (error) {
    if (error instanceof ShortReadError) refuse('zkey.malformed', `${what} could not be read completely`);
    throw error;
  }
  return bytes;
}

/**
 * The one multi-exponentiation of the check: the kernel's Pippenger MSM on every core
 * (core/kernel/multi-exp.ts), or ffjavascript's where the kernel cannot run; both compute the same
 * point. NEXT's points are checked (on the curve, canonical) by the same threads before they are
 * summed; PREV's were when it was verified.
 */
function multiExp(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
  return g1MultiExpOrFallback(bases, scalars, LINK_SCALAR_BYTES);
}

function checkedMultiExp(bases: Uint8Array, scalars: Uint8Array): Promise<CheckedSum> {
  return g1CheckedMultiExpOrFallback(bases, scalars, LINK_SCALAR_BYTES);
}

/** Where the scalars come from: a fresh random draw, or the circuit key's stream (docs/link-check.md). */
type ScalarSource = (section: number, first: number, count: number) => Uint8Array;

// Filled in place: a Uint8Array made from randomBytes' Buffer would be a second pass over the bytes.
const freshScalars: ScalarSource = (_section, _first, count) =>
  randomFillSync(new Uint8Array(count * LINK_SCALAR_BYTES));

interface SectionSums {
  /** Undefined when PREV's combination came from the cache. */
  prev: Uint8Array | undefined;
  next: Uint8Array;
}

/** Where `info` keeps its L or H section; a key without one is malformed. */
function lOrHSection(info: ZkeyInfo, id: number, name: string): { offset: number; size: number } {
  const section = info.sections.get(id);
  if (!section) refuse('zkey.malformed', `${info.label} has no ${name} section`);
  return section;
}

/**
 * Where one section holds the point at infinity (identity-pattern.ts), read in chunks.
 * Deterministic in the file alone; computed before any sum with the scalars (docs/link-check.md).
 */
async function identityPattern(info: ZkeyInfo, id: number, name: string): Promise<Uint8Array> {
  const section = lOrHSection(info, id, name);
  const count = section.size / G1_SIZE;
  const digest = new IdentityPatternDigest(id, count);
  const file = await open(info.path, 'r');
  try {
    for (let first = 0; first < count; first += CHUNK_POINTS) {
      const n = Math.min(CHUNK_POINTS, count - first);
      const what = `the ${name} section of ${info.label}`;
      digest.add(identityIndices(await readChunk(file, section.offset + first * G1_SIZE, n * G1_SIZE, what), first));
    }
  } finally {
    await file.close();
  }
  return digest.digest();
}

/** Both sections' patterns of a file (identityPattern). */
async function identityPatterns(info: ZkeyInfo): Promise<{ l: Uint8Array; h: Uint8Array }> {
  const [l, h] = await Promise.all([identityPattern(info, SECTION.l, 'L'), identityPattern(info, SECTION.h, 'H')]);
  return { l, h };
}

interface CombinationRequest {
  prev: ZkeyInfo;
  /** Undefined when only PREV is summed (linkCombinationOf). */
  next: ZkeyInfo | undefined;
  /** The section summed: L or H. */
  section: { id: number; name: 'L' | 'H' };
  scalarsFor: ScalarSource;
  /** Sum PREV's points too (false when PREV's combination came from the coordinator's cache). */
  withPrev: boolean;
  /** NEXT's partial sums, made by the coordinator as NEXT uploaded: NEXT's points are then not read. */
  nextSums?: Uint8Array[];
  /** Called once the MSM threads have work (the curve is built after, not to hold up their reads). */
  onFirstSumsPosted: () => void;
}

/**
 * Σ r_i·P_i over one section of NEXT (unless its sums are given) and of PREV (if asked), with the
 * same scalars, streamed in chunks; the next chunk is read while the MSMs of the current one run.
 * Checks NEXT's points are on the curve. Needs the curve only to add the chunks' sums, so it can
 * start before the curve is built.
 */
async function randomCombination(request: CombinationRequest): Promise<SectionSums> {
  const { prev, next, scalarsFor, withPrev, nextSums: given, onFirstSumsPosted } = request;
  const { id, name } = request.section;
  if (!withPrev && given) {
    setImmediate(onFirstSumsPosted);
    return { prev: undefined, next: addAffineParts((await getBn128()).G1, 'G1', given) };
  }
  const sums: Array<{ prev: Uint8Array | undefined; next: Uint8Array | undefined }> = [];
  const prevSection = lOrHSection(prev, id, name);
  const nextSection = next ? lOrHSection(next, id, name) : prevSection;
  const count = nextSection.size / G1_SIZE;
  const [prevFile, nextFile] = await Promise.all([
    withPrev ? open(prev.path, 'r') : undefined,
    given || !next ? undefined : open(next.path, 'r'),
  ]);
  /** Both files' chunk, once both reads have ended (so no read is left running on a file being closed). */
  const read = async (first: number): Promise<[Uint8Array | undefined, Uint8Array | undefined]> => {
    const n = Math.min(CHUNK_POINTS, count - first);
    const [prevRead, nextRead] = await Promise.allSettled([
      prevFile
        ? readChunk(prevFile, prevSection.offset + first * G1_SIZE, n * G1_SIZE, `the ${name} section of ${prev.label}`)
        : undefined,
      nextFile && next
        ? readChunk(nextFile, nextSection.offset + first * G1_SIZE, n * G1_SIZE, `the ${name} section of ${next.label}`)
        : undefined,
    ]);
    if (prevRead.status === 'rejected') throw prevRead.reason;
    if (nextRead.status === 'rejected') throw nextRead.reason;
    return [prevRead.value, nextRead.value];
  };
  let pending = count > 0 ? read(0) : undefined;
  try {
    for (let first = 0; pending; first += CHUNK_POINTS) {
      const [prevBases, nextBases] = await pending;
      pending = first + CHUNK_POINTS < count ? read(first + CHUNK_POINTS) : undefined;
      const scalars = scalarsFor(id, first, Math.min(CHUNK_POINTS, count - first));
      const summing = Promise.all([
        prevBases ? multiExp(prevBases, scalars) : undefined,
        nextBases ? checkedMultiExp(nextBases, scalars) : undefined,
      ]);
      // The slices are posted to the threads once the pool answers (a microtask or two).
      setImmediate(onFirstSumsPosted);
      const [rPrev, rNext] = await summing;
      if (rNext && 'invalidPoint' in rNext)
        refuse(
          'contribution.point_not_on_curve',
          `point ${first + rNext.invalidPoint} of the ${name} section is not a point of the curve`,
        );
      sums.push({ prev: rPrev, next: rNext?.sum });
    }
  } finally {
    await pending?.catch(() => undefined);
    await Promise.all([prevFile?.close(), nextFile?.close()]);
  }
  const { G1 } = await getBn128();
  let prevSum = G1.zero;
  let nextSum = G1.zero;
  for (const chunk of sums) {
    if (chunk.prev) prevSum = G1.add(prevSum, chunk.prev);
    if (chunk.next) nextSum = G1.add(nextSum, chunk.next);
  }
  return { prev: withPrev ? prevSum : undefined, next: given ? addAffineParts(G1, 'G1', given) : nextSum };
}

function toCombinationBytes(curve: Bn128Curve, point: Uint8Array): Uint8Array {
  const out = new Uint8Array(G1_SIZE);
  curve.G1.toRprLEM(out, 0, curve.G1.toAffine(point));
  return out;
}

interface LAndHSums {
  l: SectionSums;
  h: SectionSums;
  /** PREV's combinations from the coordinator's cache, when it had them (then l.prev and h.prev are undefined). */
  cached?: LinkCombination;
  /** Where NEXT (and so PREV: checked equal) holds the point at infinity, per section. */
  identities: { l: Uint8Array; h: Uint8Array };
}

/**
 * The random combinations of L and H, both sections side by side (one's reads overlap the other's
 * sums), once NEXT's points at infinity are known to be exactly PREV's (from the cache, or read
 * from PREV). An L refusal is reported before an H one whichever comes first, so verdicts do not
 * depend on timing.
 */
async function combineLAndH(
  prev: ZkeyInfo,
  next: ZkeyInfo,
  options: VerifyLinkFromHeadOptions,
  onFirstSumsPosted: () => void,
): Promise<LAndHSums> {
  const key = options.challenge?.key;
  const scalarsFor: ScalarSource = key
    ? (section, first, n) => challengeScalars(key, section, first, n, LINK_SCALAR_BYTES)
    : freshScalars;
  const cached = key ? options.challenge?.head : undefined;
  const given = key ? options.challenge?.next : undefined;
  const [nextPattern, prevPattern] = await Promise.all([
    given ? { l: given.lIdentities, h: given.hIdentities } : identityPatterns(next),
    cached ? { l: cached.lIdentities, h: cached.hIdentities } : identityPatterns(prev),
  ]);
  for (const [section, name] of [
    ['l', 'L'],
    ['h', 'H'],
  ] as const) {
    if (!timingSafeEqual(nextPattern[section], prevPattern[section])) {
      refuse(
        'contribution.identity_pattern_changed',
        `the ${name} section holds the point at infinity at other places than the chain head does; ` +
          'a contribution scales every point and keeps them where they are',
      );
    }
  }
  const combine = (section: CombinationRequest['section'], nextSums: Uint8Array[] | undefined) =>
    randomCombination({ prev, next, section, scalarsFor, withPrev: !cached, nextSums, onFirstSumsPosted });
  const [l, h] = await Promise.allSettled([
    combine({ id: SECTION.l, name: 'L' }, given?.l),
    combine({ id: SECTION.h, name: 'H' }, given?.h),
  ]);
  if (l.status === 'rejected') throw l.reason;
  if (h.status === 'rejected') throw h.reason;
  return { l: l.value, h: h.value, ...(cached ? { cached } : {}), identities: nextPattern };
}

/** PREV's cached combination, there whenever combineLAndH left PREV's sums out (it leaves them out only then). */
function cachedCombination(cached: LinkCombination | undefined): LinkCombination {
  if (!cached) throw new Error("the head's combination was neither computed nor cached");
  return cached;
}

/** How an L or H refusal words what NEXT's section is not (the link's words by default). */
interface LAndHWords {
  l: string;
  h: string;
}

const LINK_WORDS: LAndHWords = {
  l: 'the L section is not consistent with the new delta',
  h: 'the H section is not consistent with the new delta',
};

async function checkLAndH(
  curve: Bn128Curve,
  prev: ZkeyInfo,
  nextDelta2: Uint8Array,
  { l, h, cached, identities }: LAndHSums,
  words: LAndHWords = LINK_WORDS,
): Promise<{ next: LinkCombination; prev?: LinkCombination }> {
  const G1 = curve.G1;
  const prevDelta2 = curve.G2.fromRprLEM(prev.header.delta2, 0);
  // The cached points were written by this coordinator from a verified file, under a MAC.
  const prevL = l.prev ?? G1.fromRprLEM(cachedCombination(cached).l, 0);
  const prevH = h.prev ?? G1.fromRprLEM(cachedCombination(cached).h, 0);
  const holds = (sumNext: Uint8Array, sumPrev: Uint8Array): Promise<boolean> =>
    curve.pairingEq(sumNext, nextDelta2, G1.neg(sumPrev), prevDelta2);

  // One random combination over L‖H (the two sums added), one pairing check; L and H are only
  // told apart when it fails, to name the culprit.
  const allPrev = G1.add(prevL, prevH);
  if (G1.isZero(allPrev))
    refuse(
      'contribution.invalid',
      'the random combination of the previous L and H is the identity; the check would prove nothing',
    );
  if (!(await holds(G1.add(l.next, h.next), allPrev))) {
    if (!(await holds(l.next, prevL))) refuse('contribution.l_section_invalid', words.l);
    refuse('contribution.h_section_invalid', words.h);
  }
  const patterns = { lIdentities: identities.l, hIdentities: identities.h };
  return {
    next: { l: toCombinationBytes(curve, l.next), h: toCombinationBytes(curve, h.next), ...patterns },
    prev: cached
      ? undefined
      : { l: toCombinationBytes(curve, prevL), h: toCombinationBytes(curve, prevH), ...patterns },
  };
}

/**
 * Verifies that the zkey at `nextPath` is a valid next link on the already-verified zkey at
 * `prevPath` (see the module comment for what is checked). Throws a CoordinatorError with a stable
 * code on the first failure; returns the new contribution's index, hash (as snarkjs prints it),
 * recorded name and type.
 */
export async function verifyLinkFromHead(
  prevPath: string,
  nextPath: string,
  options: VerifyLinkFromHeadOptions = {},
): Promise<LinkVerdict> {
  const expect = options.expect ?? { kind: 'random' };
  // The MSM threads take a few hundred milliseconds to start in a fresh process (the CLI): they
  // start now, while the headers are read and the link's structure is checked.
  startMultiExpThreads();
  // Read side by side; NEXT's error, if any, is the one reported (as when they were read in turn).
  const [nextRead, prevRead] = await Promise.allSettled([
    readZkeyInfo(nextPath, options.labels?.next),
    readZkeyInfo(prevPath, options.labels?.prev),
  ]);
  if (nextRead.status === 'rejected') throw nextRead.reason;
  if (prevRead.status === 'rejected') throw prevRead.reason;
  const [next, prev] = [nextRead.value, prevRead.value];
  // The sums over L and H (nearly all of the work, on the MSM threads) start once the structure
  // is known good, or with it when the caller asks; this thread meanwhile builds the curve (once
  // the threads have work: in a fresh process the build would otherwise hold up the reads that
  // feed them) and checks the proof of knowledge and delta. Every refusal of those comes first, as
  // when the steps ran in turn, once the sums have stopped.
  let firstSumsPosted!: () => void;
  const posted = new Promise<void>((resolve) => (firstSumsPosted = resolve));
  let combining: Promise<LAndHSums> | undefined;
  const startSums = (): Promise<LAndHSums> => {
    combining = combineLAndH(prev, next, options, firstSumsPosted);
    void combining.catch(() => undefined).finally(firstSumsPosted);
    return combining;
  };
  const sameShape = [SECTION.l, SECTION.h].every(
    (id) => prev.sections.has(id) && prev.sections.get(id)?.size === next.sections.get(id)?.size,
  );
  // Awaited below, through `combining`.
  if (options.sumsDuringStructureCheck && sameShape) void startSums();
  let record: ContributionRecord;
  let curve: Bn128Curve;
  let nextDelta2: Uint8Array;
  try {
    record = await checkLinkStructure(prev, next, expect, options.sectionHashes);
    combining ??= startSums();
    await posted;
    curve = await getBn128();
    await checkProofOfKnowledge(curve, prev, record);
    nextDelta2 = await checkDelta2(curve, next);
  } catch (error) {
    await combining?.catch(() => undefined);
    throw error;
  }
  const combinations = await checkLAndH(curve, prev, nextDelta2, await combining);

  return {
    index: next.mpc.contributions.length,
    contributionHash: contributionHash(curve, record),
    recordedName: record.name,
    type: record.type,
    candidate: next,
    combination: combinations.next,
    ...(combinations.prev ? { headCombination: combinations.prev } : {}),
  };
}

export interface ScaledLAndHOptions {
  /** What NEXT's L and H are not, should they fail (the refusals' words). */
  words: LAndHWords;
  /**
   * Work for this thread while the sums run on the MSM threads (the audit checks the records of
   * the descendant's history meanwhile); its refusal is reported before one of L or H.
   */
  alongside?: (curve: Bn128Curve) => Promise<void>;
}

/**
 * L and H of `descendant`, a key any number of records after `ancestor` (a verified key of the same
 * circuit whose fixed sections it was checked to keep: the audit's contribution 0), against the
 * ancestor's: δ2 of the descendant is its δ1 in G2, its points at infinity are the ancestor's, its
 * every point is on the curve, and for fresh uniform 64-bit r_i over L‖H,
 * e(Σ r_i·D_i, δ2_desc) = e(Σ r_i·A_i, δ2_anc): so D = (δ_anc/δ_desc)·A, point for point, except with
 * probability ≤ 2^-64 (docs/audit.md, why the final key alone is sound). Whatever lies between
 * the two keys is not read. Throws the link check's codes.
 */
export async function verifyScaledLAndH(
  ancestor: ZkeyInfo,
  descendant: ZkeyInfo,
  options: ScaledLAndHOptions,
): Promise<void> {
  startMultiExpThreads();
  let firstSumsPosted!: () => void;
  const posted = new Promise<void>((resolve) => (firstSumsPosted = resolve));
  const combining = combineLAndH(ancestor, descendant, {}, firstSumsPosted);
  void combining.catch(() => undefined).finally(firstSumsPosted);
  let curve: Bn128Curve;
  let delta2: Uint8Array;
  try {
    await posted;
    curve = await getBn128();
    await options.alongside?.(curve);
    delta2 = await checkDelta2(curve, descendant);
  } catch (error) {
    await combining.catch(() => undefined);
    throw error;
  }
  await checkLAndH(curve, ancestor, delta2, await combining, options.words);
}

/**
 * The combination a verified file would leave in the coordinator's cache as NEXT, computed on its
 * own: its points at infinity, then Σ r_i·P_i over its L and over its H under the circuit key's
 * scalars (one MSM each, on every core). The coordinator computes it for a head nobody verified
 * as NEXT (contribution 0, or a head whose entry was lost), so that the first link on it costs one
 * MSM, as every later one does, instead of two. The file is taken as verified: its points are
 * not checked, as PREV's never are.
 */
export async function linkCombinationOf(
  zkeyPath: string,
  key: Uint8Array,
  label: string = zkeyPath,
): Promise<LinkCombination> {
  startMultiExpThreads();
  const info = await readZkeyInfo(zkeyPath, label);
  const identities = await identityPatterns(info);
  const scalarsFor: ScalarSource = (section, first, n) => challengeScalars(key, section, first, n, LINK_SCALAR_BYTES);
  const sum = async (section: CombinationRequest['section']): Promise<Uint8Array> => {
    const sums = await randomCombination({
      prev: info,
      next: undefined,
      section,
      scalarsFor,
      withPrev: true,
      onFirstSumsPosted: () => {},
    });
    if (!sums.prev) throw new Error('the sums of a file summed on its own are its own');
    return sums.prev;
  };
  const [l, h] = await Promise.all([sum({ id: SECTION.l, name: 'L' }), sum({ id: SECTION.h, name: 'H' })]);
  const curve = await getBn128();
  return {
    l: toCombinationBytes(curve, l),
    h: toCombinationBytes(curve, h),
    lIdentities: identities.l,
    hIdentities: identities.h,
  };
}
