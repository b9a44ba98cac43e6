/**
 * A zkey's own contribution history, read through byte ranges and checked as snarkjs checks it,
 * without a curve library (the page and the CLI run this same module).
 *
 * Reading: the binfile section table is walked with small ranges (the 12-byte file header, then
 * each section's 12-byte id and size), and only the small sections are fetched: 1 (the protocol),
 * 2, the Groth16 header (α, β, γ, and δ in G1 and G2), 3, IC (the public inputs' points), and 10,
 * the MPC parameters (the circuit hash and one record per contribution). A few kilobytes of a key
 * of any size; nothing else of the key is read. The bytes of each section read are kept, for the
 * checker to hash against the transcript (key-sections.ts). Of contribution 0 only section 2 is
 * read, from the file's first kilobyte.
 *
 * Checking (snarkjs `zkey verify`'s chain of transcripts, zkey_verify_frominit.js): each record's
 * `transcript` must be BLAKE2b-512 of the circuit hash, the public keys of every record before it
 * (deltaAfter, g1_s, g1_sx, g2_spx, transcript: zkey_utils.js `hashPubKey`) and its own g1_s and
 * g1_sx; each record's contribution hash is BLAKE2b-512 of its own public key (what snarkjs and
 * contributors print); the last record's deltaAfter must be the header's δ. So a record's hash
 * commits to every record before it, and a history cannot lose, gain or reorder a record without
 * every later transcript changing. What this does not check (the pairings: that each δ step is the
 * contributor's secret, each proof of knowledge; and that the key's points match δ) is the audit's.
 */
import { blake2b } from '@noble/hashes/blake2b';
import { CoordinatorError } from '../errors.ts';
import { BN254_Q, BN254_R } from '../crypto/bn254-moduli.ts';
import type { RangeSource } from './range-source.ts';
import { g1Uncompressed, g2Uncompressed, NonCanonicalCoordinateError } from './uncompressed-points.ts';

const N8 = 32;
const G1_BYTES = 2 * N8;
const G2_BYTES = 4 * N8;
const HASH_BYTES = 64;
const FILE_HEADER_BYTES = 12;
const SECTION_HEADER_BYTES = 12;
/** The first read also takes the small sections at the front (protocol, header): one request instead of four. */
const FIRST_READ_BYTES = 1024;
const SECTION = { protocol: 1, header: 2, ic: 3, mpc: 10 } as const;
const GROTH16_PROTOCOL = 1;
/** Section 2 of a BN254 Groth16 key: n8q, q, n8r, r, nVars, nPublic, domainSize, α1, β1, β2, γ2, δ1, δ2. */
export const HEADER_BYTES = 4 + N8 + 4 + N8 + 3 * 4 + 3 * G1_BYTES + 3 * G2_BYTES;
/** Where δ1 starts in the header: everything before it (fields, sizes, α1, β1, β2, γ2) no contribution changes. */
export const DELTA1_AT = HEADER_BYTES - G2_BYTES - G1_BYTES;
const DELTA2_AT = HEADER_BYTES - G2_BYTES;
/** IC of a circuit with up to 4095 public inputs; the service's have a dozen. */
const MAX_IC_BYTES = 4096 * G1_BYTES;
/** A record without parameters; a history of 1000 contributions is under 500 kB. */
const RECORD_FIXED_BYTES = 3 * G1_BYTES + G2_BYTES + HASH_BYTES + 4 + 4;
const MAX_MPC_BYTES = 4 * 1024 * 1024;

export const RECORD_TYPE = { contribution: 0, beacon: 1 } as const;

export interface HistoryRecord {
  deltaAfter: Uint8Array;
  g1S: Uint8Array;
  g1Sx: Uint8Array;
  g2Spx: Uint8Array;
  transcript: Uint8Array;
  type: number;
  name?: string;
  numIterationsExp?: number;
  beaconHash?: Uint8Array;
}

export interface ZkeyHistory {
  label: string;
  fileSize: number;
  /** The circuit hash (snarkjs csHash), which the transcript's init entry records. */
  csHash: Uint8Array;
  /** vk_delta_1 and vk_delta_2 of the header, as stored. */
  headerDelta1: Uint8Array;
  headerDelta2: Uint8Array;
  records: HistoryRecord[];
  /** The bytes read of each section (1, 2, 3, 10), to check against the transcript's section hashes. */
  sections: Map<number, Uint8Array>;
}

function invalid(label: string, why: string): CoordinatorError {
  return new CoordinatorError('receipt.history_invalid', `${label}: ${why}`);
}

const u32 = (bytes: Uint8Array, at: number): number =>
  new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at, true);

function littleEndian(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

/** Ranges of one file, keeping every answer so that reads inside one cost nothing (a few kB in all). */
class CachingReader {
  private readonly blocks: Array<{ offset: number; bytes: Uint8Array }> = [];

  constructor(private readonly source: RangeSource) {}

  /** `length` bytes at `offset`; a read that must go to the source asks for `fetchLength` bytes if more. */
  async bytes(offset: number, length: number, fetchLength = length): Promise<Uint8Array> {
    const block = this.blocks.find((b) => offset >= b.offset && offset + length <= b.offset + b.bytes.length);
    if (block) return block.bytes.subarray(offset - block.offset, offset - block.offset + length);
    const bytes = await this.source.read(offset, Math.max(length, fetchLength));
    this.blocks.push({ offset, bytes });
    if (bytes.length < length)
      throw invalid(this.source.label, 'the file ends inside its section table or a section (truncated)');
    return bytes.subarray(0, length);
  }
}

interface SectionPlace {
  offset: number;
  size: number;
}

/** The section table; with `until`, only as far as that section (the rest of the file is not looked at). */
async function walkSections(
  reader: CachingReader,
  label: string,
  fileSize: number,
  until?: number,
): Promise<Map<number, SectionPlace>> {
  const head = await reader.bytes(0, FILE_HEADER_BYTES, FIRST_READ_BYTES);
  if (String.fromCharCode(...head.subarray(0, 4)) !== 'zkey')
    throw invalid(label, 'it is not a zkey (no "zkey" magic bytes)');
  const count = u32(head, 8);
  if (count < 1 || count > 10) throw invalid(label, `it declares ${count} sections; a Groth16 zkey has 10`);
  const sections = new Map<number, SectionPlace>();
  let position = FILE_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const entry = await reader.bytes(position, SECTION_HEADER_BYTES);
    const id = u32(entry, 0);
    const size = u32(entry, 4) + u32(entry, 8) * 2 ** 32;
    position += SECTION_HEADER_BYTES;
    if (id < 1 || id > 10) throw invalid(label, `unknown section id ${id}`);
    if (sections.has(id)) throw invalid(label, `section ${id} appears twice`);
    if (!Number.isSafeInteger(size) || position + size > fileSize)
      throw invalid(label, `section ${id} runs past the end of the file`);
    sections.set(id, { offset: position, size });
    position += size;
    if (id === until) return sections;
  }
  if (position !== fileSize) throw invalid(label, `${fileSize - position} unexpected bytes after the last section`);
  return sections;
}

function required(sections: Map<number, SectionPlace>, id: number, label: string): SectionPlace {
  const place = sections.get(id);
  if (!place) throw invalid(label, `section ${id} is missing`);
  return place;
}

function parseRecords(bytes: Uint8Array, label: string): { csHash: Uint8Array; records: HistoryRecord[] } {
  if (bytes.length < HASH_BYTES + 4) throw invalid(label, 'its MPC section is too short');
  const csHash = bytes.slice(0, HASH_BYTES);
  const count = u32(bytes, HASH_BYTES);
  let p = HASH_BYTES + 4;
  const take = (n: number): Uint8Array => {
    const value = bytes.slice(p, p + n);
    p += n;
    return value;
  };
  const records: HistoryRecord[] = [];
  for (let i = 1; i <= count; i++) {
    if (p + RECORD_FIXED_BYTES > bytes.length) throw invalid(label, `its MPC section is truncated in record ${i}`);
    const record: HistoryRecord = {
      deltaAfter: take(G1_BYTES),
      g1S: take(G1_BYTES),
      g1Sx: take(G1_BYTES),
      g2Spx: take(G2_BYTES),
      transcript: take(HASH_BYTES),
      type: u32(bytes, p),
    };
    const parametersEnd = p + 8 + u32(bytes, p + 4);
    p += 8;
    if (parametersEnd > bytes.length) throw invalid(label, `record ${i}'s parameters run past the MPC section`);
    let last = 0;
    while (p < parametersEnd) {
      const id = bytes[p++]!;
      if (id <= last) throw invalid(label, `record ${i} has unsorted parameters`);
      last = id;
      if (id === 1 || id === 3) {
        const length = bytes[p++] ?? 0;
        if (p + length > parametersEnd) throw invalid(label, `record ${i} has a parameter running past its end`);
        const value = take(length);
        if (id === 1) record.name = new TextDecoder().decode(value);
        else record.beaconHash = value;
      } else if (id === 2) {
        record.numIterationsExp = bytes[p++];
      } else {
        throw invalid(label, `record ${i} has an unknown parameter ${id}`);
      }
    }
    if (p !== parametersEnd) throw invalid(label, `record ${i}'s parameters do not match their length`);
    records.push(record);
  }
  if (p !== bytes.length) throw invalid(label, `${bytes.length - p} unexpected bytes at the end of its MPC section`);
  return { csHash, records };
}

/** The Groth16 header (section 2), checked to be BN254's. */
async function readHeader(reader: CachingReader, sections: Map<number, SectionPlace>, label: string) {
  const protocol = required(sections, SECTION.protocol, label);
  if (protocol.size !== 4 || u32(await reader.bytes(protocol.offset, 4), 0) !== GROTH16_PROTOCOL)
    throw invalid(label, 'it is not a Groth16 key');
  const headerPlace = required(sections, SECTION.header, label);
  if (headerPlace.size !== HEADER_BYTES)
    throw invalid(label, `its Groth16 header is ${headerPlace.size} bytes, not the ${HEADER_BYTES} of a BN254 key`);
  const header = await reader.bytes(headerPlace.offset, HEADER_BYTES);
  if (u32(header, 0) !== N8 || littleEndian(header.subarray(4, 4 + N8)) !== BN254_Q)
    throw invalid(label, 'its base field is not BN254’s');
  if (u32(header, 4 + N8) !== N8 || littleEndian(header.subarray(8 + N8, 8 + 2 * N8)) !== BN254_R)
    throw invalid(label, 'its scalar field is not BN254’s');
  return { protocol: await reader.bytes(protocol.offset, 4), header };
}

/** Opens a key behind `source`: the first read says the file's size (Content-Range, or the file handle). */
async function openKey(source: RangeSource): Promise<{ reader: CachingReader; fileSize: number }> {
  const reader = new CachingReader(source);
  await reader.bytes(0, FILE_HEADER_BYTES, FIRST_READ_BYTES);
  const fileSize = source.fileSize;
  if (fileSize === undefined) throw invalid(source.label, 'its size is unknown');
  return { reader, fileSize };
}

/** Reads the history of the zkey behind `source`: the section table, sections 1, 2, 3 and 10. */
export async function readZkeyHistory(source: RangeSource): Promise<ZkeyHistory> {
  const { label } = source;
  const { reader, fileSize } = await openKey(source);
  const sections = await walkSections(reader, label, fileSize);
  const { protocol, header } = await readHeader(reader, sections, label);

  const icPlace = required(sections, SECTION.ic, label);
  const nPublic = u32(header, 8 + 2 * N8 + 4);
  if (icPlace.size !== (nPublic + 1) * G1_BYTES || icPlace.size > MAX_IC_BYTES)
    throw invalid(label, `its IC section is ${icPlace.size} bytes, not the ${(nPublic + 1) * G1_BYTES} of its header`);
  const ic = await reader.bytes(icPlace.offset, icPlace.size);

  const mpc = required(sections, SECTION.mpc, label);
  if (mpc.size > MAX_MPC_BYTES)
    throw invalid(
      label,
      `its MPC section is ${mpc.size} bytes; a history of contributions is far smaller, so it is not read`,
    );
  const mpcBytes = await reader.bytes(mpc.offset, mpc.size);
  const { csHash, records } = parseRecords(mpcBytes, label);
  return {
    label,
    fileSize,
    csHash,
    headerDelta1: header.slice(DELTA1_AT, DELTA1_AT + G1_BYTES),
    headerDelta2: header.slice(DELTA2_AT, DELTA2_AT + G2_BYTES),
    records,
    sections: new Map([
      [SECTION.protocol, protocol],
      [SECTION.header, header],
      [SECTION.ic, ic],
      [SECTION.mpc, mpcBytes],
    ]),
  };
}

/** The Groth16 header (section 2) of the key behind `source`, from its first kilobyte: for contribution 0. */
export async function readZkeyHeader(source: RangeSource): Promise<Uint8Array> {
  const { reader, fileSize } = await openKey(source);
  const sections = await walkSections(reader, source.label, fileSize, SECTION.header);
  return (await readHeader(reader, sections, source.label)).header;
}

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/**
 * Recomputes the history's chain of transcripts as snarkjs does and returns each record's
 * contribution hash (hex, in order). Throws `receipt.history_invalid` naming the first record
 * that does not follow from the ones before it, or a header δ that is not the last record's.
 */
export function checkZkeyHistory(history: ZkeyHistory): string[] {
  const { label } = history;
  const accumulated = blake2b.create({ dkLen: HASH_BYTES });
  accumulated.update(history.csHash);
  const hashes: string[] = [];
  history.records.forEach((record, i) => {
    let publicKey: Uint8Array[];
    try {
      publicKey = [
        g1Uncompressed(record.deltaAfter),
        g1Uncompressed(record.g1S),
        g1Uncompressed(record.g1Sx),
        g2Uncompressed(record.g2Spx),
      ];
    } catch (error) {
      if (error instanceof NonCanonicalCoordinateError) throw invalid(label, `record ${i + 1}: ${error.message}`);
      throw error;
    }
    const expected = accumulated.clone().update(publicKey[1]!).update(publicKey[2]!).digest();
    if (!sameBytes(expected, record.transcript)) {
      throw invalid(
        label,
        `record ${i + 1}'s transcript digest does not follow from the circuit hash and the ` +
          `${i} record${i === 1 ? '' : 's'} before it: the key's contribution history was rewritten`,
      );
    }
    const contribution = blake2b.create({ dkLen: HASH_BYTES });
    for (const part of [...publicKey, record.transcript]) {
      contribution.update(part);
      accumulated.update(part);
    }
    hashes.push(toHex(contribution.digest()));
  });
  const last = history.records.at(-1);
  if (last && !sameBytes(last.deltaAfter, history.headerDelta1)) {
    throw invalid(
      label,
      `the δ of its header is not the δ its last record (${history.records.length}) leaves: ` +
        'the key is not the one its history describes',
    );
  }
  return hashes;
}
