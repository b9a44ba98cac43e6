/**
 * The 2^22 ceremony on this machine (`npm run bench -- --only rs22`): the real-shaped rs22
 * circuit (4,194,000 constraints, 12 public inputs, a key of about 2.7 GiB; bench-chain.ts), its dev
 * ptau of power 22, then bench/whole-ceremony.ts: init, two page turns in headless Chromium (one
 * straight, one through the shaped link), one terminal turn, the coordinator's checks, finalise,
 * publish, audit, the audit again (the ptau remembered by the first) and a receipt check, each
 * against its floor with every process's peak RSS.
 *
 * The r1cs (1.6 GB) and the ptau (4.8 GB; about an hour to make on two cores) are cached in the
 * fixture cache; `--prepare` makes them and stops. A run needs about 40 GB free where the ceremony's
 * folders go (`--work DIR`, default the OS's temp dir: five keys in the chain and their published
 * copies) and holds the machine for about an hour.
 *
 * Usage: tsx bench/rs22.ts [--prepare] [--work DIR] [--link 100/20]
 */
import path from 'node:path';
import { statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseLink } from '../tests/helpers/shaped-proxy.ts';
import { benchLog as log, REAL_SHAPES, realShapedR1cs } from './bench-chain.ts';
import {
  ensureDevPtau,
  printWholeCeremony,
  removeKilledRunsFolders,
  runWholeCeremony,
  type WholeCeremonyFigures,
} from './whole-ceremony.ts';
import { parseBenchArgs } from './bench-args.ts';

const GB = 1024 ** 3;
/** Free space a run needs where its folders go: the chain's keys, the final key, their published copies. */
const NEEDED_FREE_BYTES = 40 * GB;

export async function runRs22(options: {
  work?: string;
  link: { downMbit: number; upMbit: number };
}): Promise<WholeCeremonyFigures> {
  const shape = REAL_SHAPES.rs22;
  const r1cs = await realShapedR1cs('rs22');
  const work = options.work ?? tmpdir();
  // Before the space is counted: a killed run's folder would make it look short.
  await removeKilledRunsFolders(work);
  const free = await statfs(work);
  if (free.bavail * free.bsize < NEEDED_FREE_BYTES)
    throw new Error(
      `${work} has ${((free.bavail * free.bsize) / GB).toFixed(0)} GB free; a 2^22 ceremony needs about ` +
        `${NEEDED_FREE_BYTES / GB} GB (--work DIR elsewhere)`,
    );
  return runWholeCeremony({
    title:
      `the 2^22 ceremony (rs22: ${shape.constraints.toLocaleString('en')} constraints, ` +
      `${shape.publicInputs} public inputs)`,
    circuits: [{ name: 'rs22', r1cs, publicInputs: shape.publicInputs }],
    ptau: { devPower: 22 },
    pages: ['straight', 'shaped'],
    terminal: true,
    link: options.link,
    workRoot: options.work,
    // The memo of a verified ptau saves the most at this size (the sections check is about half the audit).
    auditAgain: true,
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      prepare: { type: 'boolean', default: false },
      work: { type: 'string' },
      link: { type: 'string', default: '100/20' },
    },
  });
  if (values.prepare) {
    log(`rs22's r1cs: ${await realShapedR1cs('rs22')}`);
    const { ptau } = await ensureDevPtau(22, log);
    log(`its dev ptau: ${ptau}`);
  } else {
    printWholeCeremony(await runRs22({ work: values.work, link: parseLink(values.link!) }));
  }
}
