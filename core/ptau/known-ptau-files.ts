/**
 * The public powers of tau an audit accepts without being told a hash (known-ptau-files.json): the
 * final files of the Hermez phase-1 ceremony, prepared for phase 2, one per power from 8 to 28, with
 * the BLAKE2b-512 of each as snarkjs's README publishes it (the JSON says where from; a test compares
 * it with the installed README, so a typo cannot pass). A ptau pinned this way is a public file whose
 * secret (τ, α, β) nobody knows unless its 54 contributors and the beacon all colluded; the audit
 * still checks the sections it relies on (core/audit/check-ptau-sections.ts). Any other ptau must be
 * pinned by the auditor (`ceremony audit DIR --ptau-hash HASH`).
 */
import { readFileSync } from 'node:fs';

export interface KnownPtauFile {
  /** The file holds 2^power powers (circuits up to 2^power constraints + public inputs). */
  power: number;
  file: string;
  url: string;
  /** BLAKE2b-512 of the whole file, lower-case hex, as `b2sum` prints it. */
  blake2b512: string;
}

export interface KnownPtauList {
  source: { what: string; where: string; hash: string };
  files: KnownPtauFile[];
}

let list: KnownPtauList | undefined;

/** The list shipped next to this module (read once). */
export function knownPtauList(): KnownPtauList {
  list ??= JSON.parse(readFileSync(new URL('./known-ptau-files.json', import.meta.url), 'utf8')) as KnownPtauList;
  return list;
}

/** The known public ptau with this BLAKE2b-512, if any. */
export function knownPtauFile(blake2b512: string): KnownPtauFile | undefined {
  const hash = blake2b512.toLowerCase();
  return knownPtauList().files.find((entry) => entry.blake2b512 === hash);
}
