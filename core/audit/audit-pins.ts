/**
 * What the auditor pinned, and the audit's refusal to pass without it. Everything the audit proves
 * about the keys is relative to two inputs only the auditor can vouch for:
 *   - the ptau (pin-ptau.ts): a known public file, `--ptau-hash`, or the `ptauHash` of the auditor's
 *     own ceremony.json;
 *   - every r1cs: the `r1csHash` of the auditor's own ceremony.json (auditor-config.ts: the
 *     publication's must equal it), or `--r1cs-hash CIRCUIT=HASH`. An r1cs pinned by neither fails
 *     the audit (`audit.r1cs_unpinned`), naming its hash and how to pin it: a coordinator's r1cs can be
 *     an under-constrained circuit whose keys pass every other check.
 */
import { hashFile } from '../crypto/file-hash.ts';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import { CoordinatorError } from '../errors.ts';
import { checkPtauPin } from './pin-ptau.ts';
import type { AuditedCircuit, AuditedPtau } from './audit-report-parts.ts';

/**
 * Each r1cs's hash and who pins it, into the report's entries (an unreadable file has none).
 * `config` is the auditor's (the publication's equals it), so its r1csHash is the auditor's pin.
 */
export async function hashR1csFiles(
  config: CeremonyConfig,
  circuits: AuditedCircuit[],
  optionPins: Record<string, string>,
): Promise<void> {
  for (const circuit of config.circuits) {
    const audited = circuits.find((c) => c.name === circuit.name)!;
    const blake2b512 = await hashFile(circuit.r1csPath).catch(() => undefined);
    if (blake2b512 !== undefined) audited.r1cs.blake2b512 = blake2b512;
    if (circuit.r1csHash !== undefined) audited.r1cs.pinnedBy.push('ceremony.json');
    if (optionPins[circuit.name] !== undefined) audited.r1cs.pinnedBy.push('auditor');
  }
}

/**
 * Each r1cs against the `--r1cs-hash` pins (ceremony.json's are checkCeremonyInputs's), then every
 * r1cs pinned by one or the other: `r1cs.hash_mismatch` on the first mismatch, `audit.r1cs_unpinned`
 * naming every unpinned circuit with its hash.
 */
export function checkR1csPins(
  config: CeremonyConfig,
  circuits: AuditedCircuit[],
  optionPins: Record<string, string>,
): void {
  for (const circuit of config.circuits) {
    const pin = optionPins[circuit.name];
    const actual = circuits.find((c) => c.name === circuit.name)!.r1cs.blake2b512;
    if (pin === undefined || actual === pin) continue;
    throw new CoordinatorError(
      'r1cs.hash_mismatch',
      `circuit ${circuit.name}: ${circuit.r1cs} has BLAKE2b-512 ${actual ?? '(unreadable)'}, ` +
        `not the ${pin} pinned with --r1cs-hash`,
    );
  }
  const unpinned = circuits.filter((c) => c.r1cs.pinnedBy.length === 0);
  if (unpinned.length === 0) return;
  const names = unpinned.map((c) => c.name).join(', ');
  const options = unpinned.map((c) => `--r1cs-hash ${c.name}=${c.r1cs.blake2b512 ?? 'HASH'}`).join(' ');
  throw new CoordinatorError(
    'audit.r1cs_unpinned',
    `the r1cs of ${names} ${unpinned.length === 1 ? 'is' : 'are'} pinned neither by your ceremony.json (r1csHash) ` +
      'nor by --r1cs-hash, and an audit cannot trust a circuit the coordinator chose (keys for an ' +
      'under-constrained circuit pass every other check). Compile each from its sources yourself and compare ' +
      `its BLAKE2b-512 (\`b2sum\`) with the one here; if they agree, pin it: ceremony audit DIR ${options}`,
  );
}

/** Who pinned the r1cs files: the auditor's ceremony.json, --r1cs-hash, or both. */
export function describeR1csPins(circuits: readonly AuditedCircuit[]): string {
  const byConfig = circuits.filter((c) => c.r1cs.pinnedBy.includes('ceremony.json')).length;
  const byOption = circuits.filter((c) => c.r1cs.pinnedBy.includes('auditor')).length;
  return `every one pinned: ${byConfig} by your ceremony.json, ${byOption} by --r1cs-hash`;
}

/** Refuses `--r1cs-hash` pins naming a circuit the ceremony does not have (a usage error, before any work). */
export function refuseUnknownR1csPins(config: CeremonyConfig, optionPins: Record<string, string>): void {
  const unknown = Object.keys(optionPins).filter((name) => !config.circuits.some((c) => c.name === name));
  if (unknown.length > 0) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--r1cs-hash names ${unknown.join(', ')}, ` +
        `not a circuit of this ceremony (${config.circuits.map((c) => c.name).join(', ')})`,
    );
  }
}

/**
 * Marks `ptau` pinned (a known public file, `--ptau-hash`, the auditor's ceremony.json's ptauHash);
 * throws when nothing pins it, or a pin names another file.
 */
export function pinAuditPtau(ptau: AuditedPtau, option: string | undefined, config: string | undefined): void {
  const pin = checkPtauPin(ptau.blake2b512, ptau.path, {
    ...(option === undefined ? {} : { option }),
    ...(config === undefined ? {} : { config }),
  });
  ptau.pinned = true;
  ptau.pinnedByAuditor = pin.byAuditor;
  ptau.pinnedByConfig = pin.byAuditorConfig;
  if (pin.known) ptau.known = { file: pin.known.file, power: pin.known.power, url: pin.known.url };
}

/** The ptau finding's words: the file, its hash, who pinned it, and whether it is the development one. */
export function describePtauPin(ptau: AuditedPtau): string {
  const by = [
    ...(ptau.known ? [`the known public ${ptau.known.file}`] : []),
    ...(ptau.pinnedByConfig ? ['your ceremony.json (ptauHash)'] : []),
    ...(ptau.pinnedByAuditor ? ['the auditor (--ptau-hash)'] : []),
  ].join(' and ');
  const warning = ptau.insecure ? '; INSECURE: the development ptau, whose secret is public (test networks only)' : '';
  return `${ptau.path}, BLAKE2b-512 ${ptau.blake2b512}, pinned by ${by}${warning}`;
}
