/**
 * A strict reader of Groth16 zkey files (the snarkjs binary format) that never loads the large
 * sections: it reads the section table, the two headers and the MPC section (the contribution
 * history), checks every size against the header, and hashes sections by streaming them.
 *
 * Format: the snarkjs binfile section table (binfile/section-table.ts) with magic "zkey".
 * Sections of a Groth16 key: 1 protocol, 2 Groth16 header, 3 IC, 4 coefficients, 5 A, 6 B1,
 * 7 B2, 8 L (called C in snarkjs), 9 H, 10 MPC parameters. Points are stored affine, each field
 * element little-endian in Montgomery form.
 */
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { FILE_HASH_ALGORITHM } from '../crypto/file-hash.ts';
import { BN254_Q, BN254_R } from '../crypto/bn254-moduli.ts';
import { readExactly, readExactlyInto, ShortReadError } from '../binfile/read-exactly.ts';
import { readSectionTable, SectionTableError, type SectionLocation } from '../binfile/section-table.ts';

export const SECTION = {
  protocol: 1,
  grothHeader: 2,
  ic: 3,
  coefficients: 4,
  a: 5,
  b1: 6,
  b2: 7,
  l: 8,
  h: 9,
  mpc: 10,
} as const;

/** Sections that no contribution may change: they depend only on the circuit and phase 1. */
export const FIXED_SECTIONS = [SECTION.ic, SECTION.coefficients, SECTION.a, SECTION.b1, SECTION.b2] as const;

const GROTH16_PROTOCOL_ID = 1;
const N8 = 32;
const G1_SIZE = 2 * N8;
const G2_SIZE = 4 * N8;
const CONTRIBUTION_FIXED_SIZE = 3 * G1_SIZE + G2_SIZE + 64 + 4 + 4;
const MAX_SECTION_ID = 10;

export interface Groth16Header {
  nVars: number;
  nPublic: number;
  domainSize: number;
  /** Bytes of the header section from its start up to (not including) vk_delta_1. */
  fixedPart: Buffer;
  alpha1: Buffer;
  beta1: Buffer;
  beta2: Buffer;
  gamma2: Buffer;
  delta1: Buffer;
  delta2: Buffer;
}

export const CONTRIBUTION_TYPE = { random: 0, beacon: 1 } as const;

/** One contribution record of the MPC section, with its exact bytes kept for comparison. */
export interface ContributionRecord {
  raw: Buffer;
  deltaAfter: Buffer;
  g1S: Buffer;
  g1Sx: Buffer;
  g2Spx: Buffer;
  transcript: Buffer;
  type: number;
  name?: string;
  numIterationsExp?: number;
  beaconHash?: Buffer;
}

export interface MpcParams {
  csHash: Buffer;
  contributions: ContributionRecord[];
}

export interface ZkeyInfo {
  path: string;
  /** How messages name the file: its path for local tools, its role ("the uploaded key") on a server. */
  label: string;
  fileSize: number;
  sections: Map<number, SectionLocation>;
  header: Groth16Header;
  mpc: MpcParams;
}

/** A contribution record with no parameters (no name): the least one contribution adds to a key. */
export const MIN_CONTRIBUTION_RECORD_BYTES = CONTRIBUTION_FIXED_SIZE;

function malformed(label: string, why: string): CoordinatorError {
  return new CoordinatorError('zkey.malformed', `${label} is not a valid Groth16 zkey: ${why}`);
}

/**
 * The section table of a Groth16 key: the shared binfile table, with exactly its ten sections and nothing after them.
 */
async function readZkeySections(
  handle: FileHandle,
  label: string,
  fileSize: number,
): Promise<Map<number, SectionLocation>> {
  let table;
  try {
    table = await readSectionTable(handle, fileSize, 'zkey', MAX_SECTION_ID);
  } catch (error) {
    if (error instanceof SectionTableError) throw malformed(label, error.message);
    throw error;
  }
  for (const id of table.sections.keys()) {
    if (id < 1 || id > MAX_SECTION_ID) throw malformed(label, `unknown section id ${id}`);
  }
  if (table.end !== fileSize) throw malformed(label, `${fileSize - table.end} unexpected bytes after the last section`);
  return table.sections;
}

function section(sections: Map<number, SectionLocation>, id: number, label: string): SectionLocation {
  const location = sections.get(id);
  if (!location) throw malformed(label, `section ${id} is missing`);
  return location;
}

/** Section 2 of a Groth16 key, parsed and checked (bn128, sizes); `label` names the file in refusals. */
export function parseGrothHeader(bytes: Buffer, label: string): Groth16Header {
  let p = 0;
  const u32 = (): number => {
    const v = bytes.readUInt32LE(p);
    p += 4;
    return v;
  };
  const bigint = (n: number): bigint => {
    const v = BigInt(
      `0x${
        Buffer.from(bytes.subarray(p, p + n))
          .reverse()
          .toString('hex') || '0'
      }`,
    );
    p += n;
    return v;
  };
  const take = (n: number): Buffer => {
    const v = Buffer.from(bytes.subarray(p, p + n));
    p += n;
    return v;
  };
  const n8q = u32();
  if (n8q !== N8) throw malformed(label, `field size ${n8q} is not bn128's`);
  if (bigint(n8q) !== BN254_Q) throw malformed(label, 'base field is not bn128');
  const n8r = u32();
  if (n8r !== N8) throw malformed(label, `scalar size ${n8r} is not bn128's`);
  if (bigint(n8r) !== BN254_R) throw malformed(label, 'scalar field is not bn128');
  const nVars = u32();
  const nPublic = u32();
  const domainSize = u32();
  const expectedSize = p + 3 * G1_SIZE + 3 * G2_SIZE;
  if (bytes.length !== expectedSize)
    throw malformed(label, `Groth16 header is ${bytes.length} bytes, expected ${expectedSize}`);
  if (domainSize === 0 || (domainSize & (domainSize - 1)) !== 0)
    throw malformed(label, `domain size ${domainSize} is not a power of two`);
  if (nPublic + 1 > nVars) throw malformed(label, `${nPublic} public signals do not fit in ${nVars} variables`);
  const fixedEnd = p + 2 * G1_SIZE + 2 * G2_SIZE;
  const header: Groth16Header = {
    nVars,
    nPublic,
    domainSize,
    fixedPart: Buffer.from(bytes.subarray(0, fixedEnd)),
    alpha1: take(G1_SIZE),
    beta1: take(G1_SIZE),
    beta2: take(G2_SIZE),
    gamma2: take(G2_SIZE),
    delta1: take(G1_SIZE),
    delta2: take(G2_SIZE),
  };
  return header;
}

/** Section 10 of a key (the contribution history), parsed record by record; `label` names the file in refusals. */
export function parseMpc(bytes: Buffer, label: string): MpcParams {
  if (bytes.length < 68) throw malformed(label, 'MPC section is too short');
  const csHash = Buffer.from(bytes.subarray(0, 64));
  const count = bytes.readUInt32LE(64);
  let p = 68;
  const contributions: ContributionRecord[] = [];
  for (let i = 0; i < count; i++) {
    const start = p;
    if (p + CONTRIBUTION_FIXED_SIZE > bytes.length)
      throw malformed(label, `MPC section truncated in contribution ${i + 1}`);
    const take = (n: number): Buffer => {
      const v = Buffer.from(bytes.subarray(p, p + n));
      p += n;
      return v;
    };
    const record: Omit<ContributionRecord, 'raw'> = {
      deltaAfter: take(G1_SIZE),
      g1S: take(G1_SIZE),
      g1Sx: take(G1_SIZE),
      g2Spx: take(G2_SIZE),
      transcript: take(64),
      type: bytes.readUInt32LE(p),
    };
    p += 4;
    const paramsLength = bytes.readUInt32LE(p);
    p += 4;
    const paramsEnd = p + paramsLength;
    if (paramsEnd > bytes.length)
      throw malformed(label, `MPC section truncated in the parameters of contribution ${i + 1}`);
    let lastParam = 0;
    while (p < paramsEnd) {
      const id = bytes[p++]!;
      if (id <= lastParam) throw malformed(label, `contribution ${i + 1} has unsorted parameters`);
      lastParam = id;
      if (id === 1 || id === 3) {
        const length = bytes[p++]!;
        if (p + length > paramsEnd)
          throw malformed(label, `contribution ${i + 1} has a parameter running past its end`);
        const value = Buffer.from(bytes.subarray(p, p + length));
        p += length;
        if (id === 1) record.name = value.toString('utf8');
        else record.beaconHash = value;
      } else if (id === 2) {
        record.numIterationsExp = bytes[p++]!;
      } else {
        throw malformed(label, `contribution ${i + 1} has unknown parameter ${id}`);
      }
    }
    if (p !== paramsEnd) throw malformed(label, `contribution ${i + 1} parameters do not match their length`);
    contributions.push({ ...record, raw: Buffer.from(bytes.subarray(start, p)) });
  }
  if (p !== bytes.length) throw malformed(label, `${bytes.length - p} unexpected bytes at the end of the MPC section`);
  return { csHash, contributions };
}

function checkSectionSizes(sections: Map<number, SectionLocation>, header: Groth16Header, label: string): void {
  const expected: Array<[number, number, string]> = [
    [SECTION.protocol, 4, 'protocol'],
    [SECTION.ic, (header.nPublic + 1) * G1_SIZE, 'IC'],
    [SECTION.a, header.nVars * G1_SIZE, 'A'],
    [SECTION.b1, header.nVars * G1_SIZE, 'B1'],
    [SECTION.b2, header.nVars * G2_SIZE, 'B2'],
    [SECTION.l, (header.nVars - header.nPublic - 1) * G1_SIZE, 'L'],
    [SECTION.h, header.domainSize * G1_SIZE, 'H'],
  ];
  for (const [id, size, name] of expected) {
    const actual = section(sections, id, label).size;
    if (actual !== size) throw malformed(label, `${name} section is ${actual} bytes, the header implies ${size}`);
  }
  const coefficients = section(sections, SECTION.coefficients, label).size;
  if (coefficients < 4 || (coefficients - 4) % (12 + N8) !== 0)
    throw malformed(label, 'coefficients section has an invalid size');
}

/**
 * Reads and checks the structure of a Groth16 zkey (section table, headers, section sizes, MPC
 * records). Throws `zkey.malformed` (or `zkey.not_groth16`) with the reason; reads only the small
 * sections, so it is cheap on keys of any size. Messages name the file by `label` (default: its
 * path); a server passes a role ("the uploaded key") so no refusal carries one of its paths.
 */
export async function readZkeyInfo(filePath: string, label: string = filePath): Promise<ZkeyInfo> {
  let handle: FileHandle;
  try {
    handle = await open(filePath, 'r');
  } catch (error) {
    // The OS message repeats the path, so only its code is kept when a role names the file.
    const reason =
      label === filePath ? (error as Error).message : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new CoordinatorError('input.file_not_found', `cannot open ${label}: ${reason}`);
  }
  try {
    const { size: fileSize } = await handle.stat();
    const sections = await readZkeySections(handle, label, fileSize);
    const protocolSection = section(sections, SECTION.protocol, label);
    if (protocolSection.size !== 4) throw malformed(label, 'protocol section has an invalid size');
    const protocol = (await readExactly(handle, protocolSection.offset, 4)).readUInt32LE(0);
    if (protocol !== GROTH16_PROTOCOL_ID) {
      throw new CoordinatorError('zkey.not_groth16', `${label} is a zkey of protocol ${protocol}, not Groth16`);
    }
    const headerSection = section(sections, SECTION.grothHeader, label);
    const header = parseGrothHeader(await readExactly(handle, headerSection.offset, headerSection.size), label);
    checkSectionSizes(sections, header, label);
    const mpcSection = section(sections, SECTION.mpc, label);
    const mpc = parseMpc(await readExactly(handle, mpcSection.offset, mpcSection.size), label);
    return { path: filePath, label, fileSize, sections, header, mpc };
  } catch (error) {
    if (error instanceof CoordinatorError) throw error;
    throw malformed(label, (error as Error).message);
  } finally {
    await handle.close();
  }
}

/** Streams one section through BLAKE2b-512 and returns its digest. */
export async function hashSection(info: ZkeyInfo, id: number): Promise<Buffer> {
  const location = section(info.sections, id, info.label);
  const hash = createHash(FILE_HASH_ALGORITHM);
  const handle = await open(info.path, 'r');
  try {
    const chunkSize = 1 << 20;
    const buffer = Buffer.alloc(Math.min(chunkSize, Math.max(location.size, 1)));
    for (let done = 0; done < location.size;) {
      const length = Math.min(buffer.length, location.size - done);
      try {
        await readExactlyInto(handle, buffer.subarray(0, length), location.offset + done);
      } catch (error) {
        if (error instanceof ShortReadError) throw malformed(info.label, `section ${id} could not be read completely`);
        throw error;
      }
      hash.update(buffer.subarray(0, length));
      done += length;
    }
  } finally {
    await handle.close();
  }
  return hash.digest();
}
