/**
 * The operator's own circuits at their real size, in one run: given a folder of r1cs files (the
 * circuits the ceremony will run, compiled by the operator; this bench compiles nothing), a whole
 * ceremony on this machine (bench/whole-ceremony.ts): `ceremony init` of all of them, one page turn
 * per circuit through the shaped link (one contributor's page joins every circuit), finalise,
 * publish, audit and a receipt check, printed stage by stage against each floor with the peak RSS of
 * every process. Circuit names are the files' names; public inputs are read from each r1cs.
 *
 * Usage: tsx bench/real-ceremony.ts --r1cs DIR [--ptau FILE | --dev-ptau P] [--link 100/20]
 *                                   [--straight] [--work DIR] [--only NAME,NAME] [--audit-again]
 *   --ptau FILE     a prepared ptau large enough for the largest circuit (the audit pins it by its hash);
 *                   default: the cached development ptau of the power the largest circuit needs (test network)
 *   --straight      a second page turn per circuit, straight to the coordinator
 *   --work DIR      where the ceremony and the published folder go (several times the keys' size)
 *   --only          some of the folder's circuits
 *   --audit-again   after the audit, the same audit again on the memo of the ptau the first verified
 *                   (its sections check remembered): its time against the first's, goal ≤ 0.5
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readR1csSummary, requiredPtauPower } from '../core/setup/r1cs-header.ts';
import { parseLink } from '../tests/helpers/shaped-proxy.ts';
import { printWholeCeremony, runWholeCeremony, type CeremonyCircuit } from './whole-ceremony.ts';
import { parseBenchArgs } from './bench-args.ts';

/** ceremony.json's rule for a circuit's name. */
const CIRCUIT_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export async function realCeremonyCircuits(
  r1csDir: string,
  only?: string[],
): Promise<{ circuits: CeremonyCircuit[]; power: number }> {
  const files = (await readdir(r1csDir)).filter((f) => f.endsWith('.r1cs')).sort();
  const circuits: CeremonyCircuit[] = [];
  let power = 1;
  for (const file of files) {
    const name = file.slice(0, -'.r1cs'.length);
    if (only && !only.includes(name)) continue;
    if (!CIRCUIT_NAME.test(name))
      throw new Error(
        `${file}: a circuit's name (the file's) must be letters, digits and underscores, starting with a letter`,
      );
    const summary = await readR1csSummary(path.join(r1csDir, file));
    circuits.push({ name, r1cs: path.join(r1csDir, file), publicInputs: summary.publicInputs });
    power = Math.max(power, requiredPtauPower(summary));
  }
  if (circuits.length === 0) throw new Error(`no .r1cs files${only ? ` named ${only.join(', ')}` : ''} in ${r1csDir}`);
  return { circuits, power };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      r1cs: { type: 'string' },
      ptau: { type: 'string' },
      'dev-ptau': { type: 'string' },
      link: { type: 'string', default: '100/20' },
      straight: { type: 'boolean', default: false },
      work: { type: 'string' },
      only: { type: 'string' },
      'audit-again': { type: 'boolean', default: false },
    },
  });
  if (!values.r1cs) {
    process.stderr.write('usage: tsx bench/real-ceremony.ts --r1cs DIR [--ptau FILE | --dev-ptau P] [--link 100/20]\n');
    process.exit(2);
  }
  const { circuits, power } = await realCeremonyCircuits(values.r1cs, values.only?.split(','));
  const figures = await runWholeCeremony({
    title: `the ceremony of ${values.r1cs} (${circuits.length} circuits)`,
    circuits,
    ptau: values.ptau ? { file: values.ptau } : { devPower: Number(values['dev-ptau'] ?? power) },
    pages: values.straight ? ['shaped', 'straight'] : ['shaped'],
    terminal: false,
    link: parseLink(values.link!),
    workRoot: values.work,
    auditAgain: values['audit-again'],
  });
  printWholeCeremony(figures);
}
