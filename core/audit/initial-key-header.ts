/**
 * The fixed parts of contribution 0 (check-initial-key.ts): the file's version and section order,
 * and the Groth16 header (sections 1, 2) compared byte for byte with what `zkey new` writes for the
 * r1cs and the ptau; the header's points start the circuit hash.
 */
import type { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { CurveGroup } from 'ffjavascript';
import { CoordinatorError } from '../errors.ts';
import type { SectionLocation } from '../binfile/section-table.ts';
import type { ZkeyInfo } from '../zkey/zkey-file.ts';
import { G1_SIZE, G2_SIZE, readAt, type AuditCurve, type GroupName } from './audit-curve.ts';
import { initialKeyMismatch } from './initial-key-mismatch.ts';
import type { R1csLayout } from './initial-key-r1cs-pass.ts';

/** The order in which `zkey new` writes the sections (the file is compared as bytes, so order counts). */
const SECTION_ORDER = [1, 2, 4, 3, 9, 8, 5, 6, 7, 10];

/** ptau sections of α·G1, β·G1 and β·G2 (their first point is the key's α1, β1, β2). */
const PTAU_ALPHA_TAU_G1 = 4;
const PTAU_BETA_TAU_G1 = 5;
const PTAU_BETA_G2 = 6;

function generatorLem(group: CurveGroup, size: number): Buffer {
  const out = new Uint8Array(size);
  group.toRprLEM(out, 0, group.g);
  return Buffer.from(out);
}

function uncompressedOf(group: CurveGroup, lem: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  group.toRprUncompressed(out, 0, group.fromRprLEM(lem, 0));
  return out;
}

/** The file's version and section order (readZkeyInfo has checked the rest of the layout). */
export async function checkInitialKeyLayout(key: FileHandle, info: ZkeyInfo): Promise<void> {
  const head = Buffer.from(await readAt(key, 0, 12, info.label));
  if (head.readUInt32LE(4) !== 1)
    throw initialKeyMismatch('header', info.label, `has file version ${head.readUInt32LE(4)}, not 1`);
  const order = [...info.sections.entries()].sort((x, y) => x[1].offset - y[1].offset).map(([id]) => id);
  if (order.join(',') !== SECTION_ORDER.join(',')) {
    throw initialKeyMismatch(
      'header',
      info.label,
      `lists its sections in the order ${order.join(',')}, not ${SECTION_ORDER.join(',')}`,
    );
  }
}

/** Sections 1 and 2 byte for byte; starts the circuit hash with the header's points. */
export async function checkInitialKeyHeader(
  curve: AuditCurve,
  info: ZkeyInfo,
  r1cs: R1csLayout,
  domainSize: number,
  ptau: FileHandle,
  ptauSections: Map<number, SectionLocation>,
  csHash: ReturnType<typeof createHash>,
): Promise<void> {
  const label = info.label;
  const { header } = info;
  if (header.nVars !== r1cs.nWires)
    throw initialKeyMismatch('header', label, `has ${header.nVars} variables, the r1cs ${r1cs.nWires}`);
  if (header.nPublic !== r1cs.nPublic)
    throw initialKeyMismatch('header', label, `has ${header.nPublic} public signals, the r1cs ${r1cs.nPublic}`);
  if (header.domainSize !== domainSize)
    throw initialKeyMismatch('header', label, `has domain size ${header.domainSize}, the r1cs needs ${domainSize}`);
  const first = async (id: number, size: number, what: string): Promise<Buffer> => {
    const section = ptauSections.get(id);
    if (!section || section.size < size)
      throw new CoordinatorError('ptau.malformed', `the ptau lacks its ${what} section`);
    return Buffer.from(await readAt(ptau, section.offset, size, `the ptau's ${what} section`));
  };
  const expected: Array<[string, Buffer, Buffer, GroupName]> = [
    ['α1', header.alpha1, await first(PTAU_ALPHA_TAU_G1, G1_SIZE, 'alpha'), 'G1'],
    ['β1', header.beta1, await first(PTAU_BETA_TAU_G1, G1_SIZE, 'beta'), 'G1'],
    ['β2', header.beta2, await first(PTAU_BETA_G2, G2_SIZE, 'beta G2'), 'G2'],
    ['γ2', header.gamma2, generatorLem(curve.G2, G2_SIZE), 'G2'],
    ['δ1', header.delta1, generatorLem(curve.G1, G1_SIZE), 'G1'],
    ['δ2', header.delta2, generatorLem(curve.G2, G2_SIZE), 'G2'],
  ];
  for (const [name, actual, wanted, group] of expected) {
    if (!actual.equals(wanted)) throw initialKeyMismatch('header', label, `${name} is not the one snarkjs writes`);
    csHash.update(uncompressedOf(curve[group], wanted, group === 'G1' ? G1_SIZE : G2_SIZE));
  }
}
