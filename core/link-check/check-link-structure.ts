/**
 * The structural half of deciding whether a candidate zkey is the next link on a verified head:
 * same circuit (header, IC, coefficients, A, B1, B2 byte-equal), an MPC history that is the head's
 * plus exactly one new record of the expected kind, a new delta that the header carries, and L and
 * H of the head's sizes. No cryptography: both `verifyLinkFromInit` (which then asks snarkjs) and
 * `verifyLinkFromHead` (which checks the new record and L, H itself) start here, so a refusal carries the
 * same code whichever path ran.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { readExactlyInto, ShortReadError } from '../binfile/read-exactly.ts';
import {
  CONTRIBUTION_TYPE,
  FIXED_SECTIONS,
  hashSection,
  SECTION,
  type ContributionRecord,
  type Groth16Header,
  type ZkeyInfo,
} from '../zkey/zkey-file.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';

/** What kind of record the new link must add. */
export type LinkExpectation = { kind: 'random' } | { kind: 'beacon'; beaconHex: string; iterationsExp: number };

function refuse(code: ErrorCode, message: string): never {
  throw new CoordinatorError(code, message);
}

/** Bytes of each section compared per read: 4 MiB from each file. */
const COMPARE_CHUNK = 4 << 20;

async function readSectionChunk(handle: FileHandle, buffer: Buffer, length: number, position: number): Promise<void> {
  try {
    await readExactlyInto(handle, buffer.subarray(0, length), position);
  } catch (error) {
    if (error instanceof ShortReadError) refuse('zkey.malformed', 'a section of the key could not be read completely');
    throw error;
  }
}

/**
 * Compares a section of both files byte for byte, streamed, stopping at the first difference: a
 * memcmp costs a fraction of hashing both (hundreds of MB at 2^18 with real circuits' A and B).
 */
async function sameSectionBytes(a: ZkeyInfo, b: ZkeyInfo, id: number): Promise<boolean> {
  const sa = a.sections.get(id);
  const sb = b.sections.get(id);
  if (sa?.size !== sb?.size) return false;
  if (!sa || !sb) {
    // Both lack it: hashSection refuses a missing section with the file's own error.
    const [ha, hb] = await Promise.all([hashSection(a, id), hashSection(b, id)]);
    return ha.equals(hb);
  }
  const [fa, fb] = await Promise.all([open(a.path, 'r'), open(b.path, 'r')]);
  try {
    const [ba, bb] = [
      Buffer.allocUnsafe(Math.min(COMPARE_CHUNK, sa.size)),
      Buffer.allocUnsafe(Math.min(COMPARE_CHUNK, sa.size)),
    ];
    for (let done = 0; done < sa.size; done += COMPARE_CHUNK) {
      const length = Math.min(COMPARE_CHUNK, sa.size - done);
      await Promise.all([
        readSectionChunk(fa, ba, length, sa.offset + done),
        readSectionChunk(fb, bb, length, sb.offset + done),
      ]);
      if (!ba.subarray(0, length).equals(bb.subarray(0, length))) return false;
    }
    return true;
  } finally {
    await Promise.all([fa.close(), fb.close()]);
  }
}

const SECTION_NAMES: Record<number, string> = { 3: 'IC', 4: 'coefficients', 5: 'A', 6: 'B1', 7: 'B2' };

/** How refusals name the key compared with: the chain head, or (the audit) contribution 0. */
const CHAIN_HEAD = 'the chain head';

const sameShape = (h: Groth16Header, c: Groth16Header): boolean =>
  h.nVars === c.nVars && h.nPublic === c.nPublic && h.domainSize === c.domainSize;

function headerMismatch(headName: string): never {
  refuse('contribution.header_mismatch', `the key header (alpha, beta or gamma) differs from ${headName}`);
}

/** The candidate's circuit hash and header (all but δ) must be the head's. */
function checkSameHeader(head: ZkeyInfo, candidate: Pick<ZkeyInfo, 'header' | 'mpc'>, headName = CHAIN_HEAD): void {
  const h = head.header;
  const c = candidate.header;
  if (!head.mpc.csHash.equals(candidate.mpc.csHash) || !sameShape(h, c)) {
    refuse(
      'contribution.wrong_circuit',
      `the file is a key of another circuit (circuit hash ${candidate.mpc.csHash.toString('hex').slice(0, 16)}…, ` +
        `${c.nPublic} public inputs, ${c.nVars} variables; expected ` +
        `${head.mpc.csHash.toString('hex').slice(0, 16)}…, ${h.nPublic}, ${h.nVars})`,
    );
  }
  if (!h.fixedPart.equals(c.fixedPart)) headerMismatch(headName);
}

/**
 * checkSameHeader's rules that need only the header, for a whole key whose history (section 10,
 * its last) has not arrived yet: a header that fails here fails checkSameHeader, with this code.
 */
export function checkSameHeaderAsHead(head: Groth16Header, candidate: Groth16Header): void {
  if (!sameShape(head, candidate)) {
    refuse(
      'contribution.wrong_circuit',
      `the file is a key of another circuit (${candidate.nPublic} public inputs, ${candidate.nVars} variables, ` +
        `a domain of ${candidate.domainSize}; expected ${head.nPublic}, ${head.nVars}, ${head.domainSize})`,
    );
  }
  if (!head.fixedPart.equals(candidate.fixedPart)) headerMismatch(CHAIN_HEAD);
}

/** The refusal of a key whose fixed section `id` (IC, coefficients, A, B1, B2) is not the one of `headName`. */
export function fixedSectionMismatch(id: number, headName = CHAIN_HEAD): CoordinatorError {
  return new CoordinatorError(
    'contribution.header_mismatch',
    `the ${SECTION_NAMES[id]} section differs from ${headName}; a contribution may only change delta, L and H`,
  );
}

/**
 * The BLAKE2b-512 of each section body of both files (as the transcript records them), when the
 * caller holds them for the very bytes it checks: the coordinator for a candidate it hashed when
 * the upload ended (or as it spliced it from the head), and the head's from its transcript entry.
 * A fixed section whose two hashes are known is compared by them: the same verdict as a byte
 * comparison (a collision of BLAKE2b-512 aside) without reading either body, which at 2^22 is
 * over a gigabyte a file. A section either lacks is compared byte for byte.
 */
export interface KnownSectionHashes {
  head: SectionHashes;
  candidate: SectionHashes;
}

async function sameSection(head: ZkeyInfo, candidate: ZkeyInfo, id: number, known?: KnownSectionHashes) {
  const [ofHead, ofCandidate] = [known?.head[String(id)], known?.candidate[String(id)]];
  if (ofHead !== undefined && ofCandidate !== undefined) return ofHead === ofCandidate;
  return sameSectionBytes(head, candidate, id);
}

async function checkSameFixedSections(
  head: ZkeyInfo,
  candidate: ZkeyInfo,
  known?: KnownSectionHashes,
  headName = CHAIN_HEAD,
) {
  for (const id of FIXED_SECTIONS) {
    if (!(await sameSection(head, candidate, id, known))) throw fixedSectionMismatch(id, headName);
  }
}

/** Finds the one new record, or says precisely how the history fails to extend the head's. */
function newRecordOnHead(head: ZkeyInfo, candidate: Pick<ZkeyInfo, 'mpc'>): ContributionRecord {
  const headRecords = head.mpc.contributions;
  const records = candidate.mpc.contributions;
  const sharedPrefix = (length: number): boolean => {
    for (let i = 0; i < length; i++) if (!records[i]!.raw.equals(headRecords[i]!.raw)) return false;
    return true;
  };
  const h = headRecords.length;
  const c = records.length;
  if (c <= h && sharedPrefix(c)) {
    if (c === h)
      refuse(
        'contribution.no_new_contribution',
        `the file is the current head (contribution ${h}) itself: it adds no contribution`,
      );
    refuse(
      'contribution.stale',
      `the file carries ${c} contributions, the head has ${h}; it is the chain's contribution ${c}, not a new link`,
    );
  }
  if (c >= 1 && c - 1 < h && sharedPrefix(c - 1)) {
    refuse(
      'contribution.stale',
      `the file was built on contribution ${c - 1}, but the head is now ` +
        `contribution ${h}; download the head and contribute again`,
    );
  }
  if (!sharedPrefix(Math.min(h, c))) {
    refuse('contribution.history_mismatch', "the file's contribution history is not the chain's history");
  }
  if (c > h + 1)
    refuse(
      'contribution.multiple_new_contributions',
      `the file adds ${c - h} contributions at once; exactly one is accepted per link`,
    );
  return records[h]!;
}

/** The record is of the kind expected: a random contribution, or the beacon the transcript names. */
export function checkExpectedKind(record: ContributionRecord, expect: LinkExpectation): void {
  if (expect.kind === 'random') {
    if (record.type !== CONTRIBUTION_TYPE.random) {
      refuse(
        'contribution.unexpected_type',
        'the new contribution is a beacon contribution; only the coordinator applies the beacon, at finalisation',
      );
    }
    return;
  }
  const beaconMatches =
    record.type === CONTRIBUTION_TYPE.beacon &&
    record.beaconHash?.toString('hex') === expect.beaconHex.toLowerCase() &&
    record.numIterationsExp === expect.iterationsExp;
  if (!beaconMatches) {
    refuse(
      'finalise.beacon_mismatch',
      `the final contribution is not the beacon ${expect.beaconHex} with 2^${expect.iterationsExp} iterations`,
    );
  }
}

/** The one new record, of the expected kind, whose δ differs from the head's and is the header's. */
function checkRecordOnHead(
  head: ZkeyInfo,
  candidate: Pick<ZkeyInfo, 'header' | 'mpc'>,
  expect: LinkExpectation,
): ContributionRecord {
  const record = newRecordOnHead(head, candidate);
  checkExpectedKind(record, expect);

  if (record.deltaAfter.equals(head.header.delta1)) {
    refuse(
      'contribution.delta_unchanged',
      'the new contribution leaves delta unchanged (its secret is 1): it adds no randomness',
    );
  }
  if (!record.deltaAfter.equals(candidate.header.delta1)) {
    refuse('contribution.delta_mismatch', "the key's delta is not the delta its new contribution produced");
  }
  return record;
}

/**
 * The part of checkLinkStructure that needs only the candidate's header and history (sections 2
 * and 10): what a contribution delta is checked for as soon as its record has arrived, before any
 * of its points (server/files/delta-intake.ts). Returns the new record.
 */
export function checkNewRecord(
  head: ZkeyInfo,
  candidate: Pick<ZkeyInfo, 'header' | 'mpc'>,
  expect: LinkExpectation,
): ContributionRecord {
  checkSameHeader(head, candidate);
  return checkRecordOnHead(head, candidate, expect);
}

function checkSameLAndHSizes(head: ZkeyInfo, candidate: ZkeyInfo, headName = CHAIN_HEAD): void {
  for (const id of [SECTION.l, SECTION.h]) {
    if (candidate.sections.get(id)?.size !== head.sections.get(id)?.size) {
      refuse('zkey.malformed', `section ${id} has a different size from ${headName}`);
    }
  }
}

/**
 * Checks everything about `candidate` as the next link on the verified `head` that needs no
 * cryptography, and returns the one new contribution record. Throws a CoordinatorError with the
 * code of the first failure.
 */
export async function checkLinkStructure(
  head: ZkeyInfo,
  candidate: ZkeyInfo,
  expect: LinkExpectation,
  known?: KnownSectionHashes,
): Promise<ContributionRecord> {
  checkSameHeader(head, candidate);
  await checkSameFixedSections(head, candidate, known);
  const record = checkRecordOnHead(head, candidate, expect);
  checkSameLAndHSizes(head, candidate);
  return record;
}

/**
 * What a key of the chain any number of records after `ancestor` keeps of it (the audit's check of
 * a key against contribution 0): the circuit, the header but δ, the fixed sections (by the section
 * hashes both files' bytes gave, or byte for byte) and the sizes of L and H. Its history is the
 * caller's to check. Throws the codes checkLinkStructure does; `ancestorName` names the ancestor.
 */
export async function checkSameCircuit(
  ancestor: ZkeyInfo,
  descendant: ZkeyInfo,
  ancestorName: string,
  known?: KnownSectionHashes,
): Promise<void> {
  checkSameHeader(ancestor, descendant, ancestorName);
  await checkSameFixedSections(ancestor, descendant, known, ancestorName);
  checkSameLAndHSizes(ancestor, descendant, ancestorName);
}
