/**
 * Reads what the ceremony needs from a powers-of-tau file without loading it: its power, whether
 * it was prepared for phase 2, and whether it carries the insecure development marker.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { readExactly } from '../binfile/read-exactly.ts';
import { readSectionTable } from '../binfile/section-table.ts';

/**
 * Name of the one contribution of a development ptau (see dev-ptau.ts). Its secret is derived
 * from a public beacon, so anyone can forge proofs against keys built on it.
 */
export const INSECURE_PTAU_MARKER = 'INSECURE-DEV-PTAU secret is public: test networks only';

const PTAU_HEADER_SECTION = 1;
const PTAU_CONTRIBUTIONS_SECTION = 7;
const PTAU_FIRST_PHASE2_SECTION = 12;

export interface PtauSummary {
  power: number;
  preparedForPhase2: boolean;
  insecure: boolean;
}

export async function readPtauSummary(ptauPath: string): Promise<PtauSummary> {
  let handle: FileHandle;
  try {
    handle = await open(ptauPath, 'r');
  } catch {
    throw new CoordinatorError('ptau.malformed', `powers of tau file ${ptauPath} does not exist or cannot be read`);
  }
  try {
    const { size } = await handle.stat();
    const { sections } = await readSectionTable(handle, size, 'ptau');
    const header = sections.get(PTAU_HEADER_SECTION);
    if (!header) throw new Error('no header section');
    const headerBytes = await readExactly(handle, header.offset, header.size);
    const n8 = headerBytes.readUInt32LE(0);
    const power = headerBytes.readUInt32LE(4 + n8);
    const contributions = sections.get(PTAU_CONTRIBUTIONS_SECTION);
    const contributionBytes = contributions
      ? await readExactly(handle, contributions.offset, contributions.size)
      : Buffer.alloc(0);
    return {
      power,
      preparedForPhase2: sections.has(PTAU_FIRST_PHASE2_SECTION),
      insecure: contributionBytes.includes(Buffer.from(INSECURE_PTAU_MARKER.slice(0, 64), 'utf8')),
    };
  } catch (error) {
    throw new CoordinatorError(
      'ptau.malformed',
      `${ptauPath} is not a valid powers of tau file: ${(error as Error).message}`,
    );
  } finally {
    await handle.close();
  }
}
