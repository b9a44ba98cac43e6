/**
 * Sections 1–7 of a ptau made of one beacon contribution on an empty accumulator, written from
 * the known key, byte for byte as snarkjs's newAccumulator + `powersoftau beacon` write them
 * (powersoftau_new.js, powersoftau_beacon.js, powersoftau_utils.js), but with the points computed
 * by generatorTimesFr instead of batchApplyKey (one full scalar multiplication per point):
 *   1 header (n8, q, power, ceremonyPower)   2 tau^i·G1, i < 2^(p+1)−1   3 tau^i·G2, i < 2^p
 *   4 alpha·tau^i·G1   5 beta·tau^i·G1   6 beta·G2   7 the contribution record
 * and the record's hashes: the first challenge (blake2b of the empty accumulator), the response
 * (challenge ‖ every point compressed ‖ the public key uncompressed; its state before the key is
 * stored as the 216-byte "partial hash" in @noble/hashes' internal layout, so that one hash runs
 * on snarkjs's own copy of @noble/hashes), and the next challenge (response hash ‖ every point
 * uncompressed). Points are stored affine in Montgomery form ("LEM").
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Bn128Curve } from 'ffjavascript';
import type { DevPtauKey } from './dev-ptau-secret.ts';
import { generatorTimesFr } from './fixed-base-times.ts';
import { readExactlyInto } from '../binfile/read-exactly.ts';

const FR_BYTES = 32;
/** Points per generated, written and hashed chunk; a multiple of snarkjs's beacon chunk (below). */
const CHUNK_POINTS = 1 << 16;
const BEACON_CONTRIBUTION_TYPE = 1;

interface NobleBlake2b {
  update(data: Uint8Array): NobleBlake2b;
  digest(): Uint8Array;
  buffer: Uint8Array;
  pos: number;
  length: number;
  [state: string]: unknown;
}

function nobleBlake2b(): NobleBlake2b {
  // snarkjs's own dependency, resolved from snarkjs: the partial hash is that library's layout.
  const requireFromSnarkjs = createRequire(import.meta.resolve('snarkjs'));
  const { blake2b } = requireFromSnarkjs('@noble/hashes/blake2b') as {
    blake2b: { create(options: { dkLen: number }): NobleBlake2b };
  };
  return blake2b.create({ dkLen: 64 });
}

/** snarkjs misc.toPartialHash: the 128-byte pending block, the 16 state words, length and pos. */
function toPartialHash(hash: NobleBlake2b): Uint8Array {
  const out = new Uint8Array(216);
  const words = new Uint32Array(out.buffer, 128, 22);
  out.set(hash.buffer);
  for (let i = 0; i < 8; i++) {
    words[2 * i] = hash[`v${i}l`] as number;
    words[2 * i + 1] = hash[`v${i}h`] as number;
  }
  words[18] = hash.pos;
  words[16] = hash.length - hash.pos;
  return out;
}

/** The first challenge hash of an empty accumulator of `power` (powersoftau_utils.calculateFirstChallengeHash). */
export function firstChallengeHash(curve: Bn128Curve, power: number): Uint8Array {
  const g1 = curve.G1;
  const g2 = curve.G2;
  const vG1 = new Uint8Array(64);
  const vG2 = new Uint8Array(128);
  g1.toRprUncompressed(vG1, 0, g1.g);
  g2.toRprUncompressed(vG2, 0, g2.g);
  const hasher = createHash('blake2b512').update(createHash('blake2b512').digest());
  const repeat = (point: Uint8Array, n: number): void => {
    const block = Buffer.alloc(Math.min(n, 1 << 16) * point.byteLength);
    for (let i = 0; i < block.byteLength; i += point.byteLength) block.set(point, i);
    for (let done = 0; done < n;) {
      const k = Math.min(n - done, block.byteLength / point.byteLength);
      hasher.update(block.subarray(0, k * point.byteLength));
      done += k;
    }
  };
  repeat(vG1, 2 ** (power + 1) - 1);
  repeat(vG2, 2 ** power);
  repeat(vG1, 2 ** power);
  repeat(vG1, 2 ** power);
  hasher.update(vG2);
  return hasher.digest();
}

class SectionWriter {
  constructor(
    private readonly handle: FileHandle,
    public pos: number,
  ) {}

  async write(bytes: Uint8Array): Promise<void> {
    let written = 0;
    while (written < bytes.byteLength) {
      const { bytesWritten } = await this.handle.write(bytes, written, bytes.byteLength - written, this.pos + written);
      written += bytesWritten;
    }
    this.pos += bytes.byteLength;
  }

  async section(id: number, size: number): Promise<void> {
    const header = Buffer.alloc(12);
    header.writeUInt32LE(id, 0);
    header.writeBigUInt64LE(BigInt(size), 4);
    await this.write(header);
  }
}

export interface Phase1Options {
  power: number;
  key: DevPtauKey;
  challengeHash: Uint8Array;
  contributionName: string;
  beaconHash: Uint8Array;
  beaconIterationsExp: number;
  /** Called after each chunk of points of a section is written (for progress display). */
  onPoints?: (section: string, done: number, total: number) => void;
}

/**
 * Writes sections 1–7 at `position` of `handle` (after the caller's 12-byte file header) and
 * returns the position after them.
 */
export async function writePhase1Sections(
  handle: FileHandle,
  position: number,
  curve: Bn128Curve,
  options: Phase1Options,
): Promise<number> {
  const { power, key } = options;
  const Fr = curve.Fr;
  const groups = { G1: curve.G1, G2: curve.G2 };
  const out = new SectionWriter(handle, position);

  await writeHeaderSection(out, curve, power);

  const response = nobleBlake2b();
  response.update(options.challengeHash);
  const sections = [
    { id: 2, group: 'G1', count: 2 ** (power + 1) - 1, first: Fr.one },
    { id: 3, group: 'G2', count: 2 ** power, first: Fr.one },
    { id: 4, group: 'G1', count: 2 ** power, first: key.alpha.prvKey },
    { id: 5, group: 'G1', count: 2 ** power, first: key.beta.prvKey },
    { id: 6, group: 'G2', count: 1, first: key.beta.prvKey },
  ] as const;
  const starts: Array<{ group: 'G1' | 'G2'; offset: number; count: number }> = [];
  const firstPoints = new Map<number, Uint8Array[]>();
  for (const section of sections) {
    const group = groups[section.group];
    const pointSize = group.F.n8 * 2;
    await out.section(section.id, section.count * pointSize);
    starts.push({ group: section.group, offset: out.pos, count: section.count });
    let t = section.first;
    for (let start = 0; start < section.count; start += CHUNK_POINTS) {
      const n = Math.min(CHUNK_POINTS, section.count - start);
      const scalars = new Uint8Array(n * FR_BYTES);
      for (let i = 0; i < n; i++) {
        scalars.set(t, i * FR_BYTES);
        t = Fr.mul(t, key.tau.prvKey);
      }
      const points = await generatorTimesFr(curve, section.group, scalars);
      if (start === 0)
        firstPoints.set(section.id, [points.slice(0, pointSize), points.slice(pointSize, 2 * pointSize)]);
      await out.write(points);
      options.onPoints?.(`section ${section.id} (${section.group})`, start + n, section.count);
      const compressed = await group.batchLEMtoC(points);
      // Fed in the pieces snarkjs's beacon feeds (one per chunk of 2^20 bytes of points): the
      // partial hash stores the hasher's whole 128-byte block buffer, whose bytes past `pos` are
      // left over from earlier blocks and so depend on how the input was split. They do not change
      // any hash, but they are in the file, and the file should be snarkjs's byte for byte.
      const piece = Math.floor((1 << 20) / pointSize) * (pointSize / 2);
      for (let i = 0; i < compressed.byteLength; i += piece) response.update(compressed.subarray(i, i + piece));
    }
  }
  const partialHash = toPartialHash(response);

  const { keyUncompressed, keyLem } = encodePublicKey(curve, key);
  response.update(keyUncompressed);
  const responseHash = response.digest();

  const nextChallenge = await hashPointsAgain(handle, curve, starts, responseHash);

  // 7: the contribution record (powersoftau_utils.writeContribution).
  const name = Buffer.from(options.contributionName.substring(0, 64), 'utf8');
  const params = Buffer.concat([
    Uint8Array.of(1, name.byteLength),
    name,
    Uint8Array.of(2, options.beaconIterationsExp),
    Uint8Array.of(3, options.beaconHash.byteLength),
    options.beaconHash,
  ]);
  const u32 = (v: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v, 0);
    return b;
  };
  const record = Buffer.concat([
    u32(1), // one contribution
    firstPoints.get(2)![1]!, // tau·G1
    firstPoints.get(3)![1]!, // tau·G2
    firstPoints.get(4)![0]!, // alpha·G1
    firstPoints.get(5)![0]!, // beta·G1
    firstPoints.get(6)![0]!, // beta·G2
    keyLem,
    partialHash,
    nextChallenge,
    u32(BEACON_CONTRIBUTION_TYPE),
    u32(params.byteLength),
    params,
  ]);
  await out.section(7, record.byteLength);
  await out.write(record);
  return out.pos;
}

/** Section 1: the field's modulus and the ptau's power (twice: its own and the ceremony's). */
async function writeHeaderSection(out: SectionWriter, curve: Bn128Curve, power: number): Promise<void> {
  await out.section(1, 4 + 32 + 4 + 4);
  const header = Buffer.alloc(44);
  header.writeUInt32LE(32, 0);
  let q = curve.q;
  for (let i = 0; i < 32; i++, q >>= 8n) header[4 + i] = Number(q & 0xffn);
  header.writeUInt32LE(power, 36);
  header.writeUInt32LE(power, 40);
  await out.write(header);
}

/** The public key, as powersoftau_utils.toPtauPubKeyRpr writes it: 6 G1 then 3 G2 points, uncompressed and LEM. */
function encodePublicKey(curve: Bn128Curve, key: DevPtauKey): { keyUncompressed: Uint8Array; keyLem: Uint8Array } {
  const g1Points = [key.tau.g1_s, key.tau.g1_sx, key.alpha.g1_s, key.alpha.g1_sx, key.beta.g1_s, key.beta.g1_sx];
  const g2Points = [key.tau.g2_spx, key.alpha.g2_spx, key.beta.g2_spx];
  const keyUncompressed = new Uint8Array(6 * 64 + 3 * 128);
  const keyLem = new Uint8Array(6 * 64 + 3 * 128);
  g1Points.forEach((p, i) => {
    curve.G1.toRprUncompressed(keyUncompressed, i * 64, p);
    curve.G1.toRprLEM(keyLem, i * 64, p);
  });
  g2Points.forEach((p, i) => {
    curve.G2.toRprUncompressed(keyUncompressed, 6 * 64 + i * 128, p);
    curve.G2.toRprLEM(keyLem, 6 * 64 + i * 128, p);
  });
  return { keyUncompressed, keyLem };
}

/** The next challenge: the response's hash, then every point again, uncompressed, read back from the file. */
async function hashPointsAgain(
  handle: FileHandle,
  curve: Bn128Curve,
  starts: Array<{ group: 'G1' | 'G2'; offset: number; count: number }>,
  responseHash: Uint8Array,
): Promise<Uint8Array> {
  const nextChallenge = createHash('blake2b512').update(responseHash);
  for (const { group: name, offset, count } of starts) {
    const group = curve[name];
    const pointSize = group.F.n8 * 2;
    for (let start = 0; start < count; start += CHUNK_POINTS) {
      const n = Math.min(CHUNK_POINTS, count - start);
      const lem = new Uint8Array(n * pointSize);
      await readExactlyInto(handle, lem, offset + start * pointSize);
      nextChallenge.update(await group.batchLEMtoU(lem));
    }
  }
  return nextChallenge.digest();
}
