/**
 * The auditor's ceremony.json, not the coordinator's. What the audit relies on besides the keys (the
 * circuits and their order, each verifier's name, public inputs and r1cs hash, minContributions, the
 * ptau hash, the id and whether it is a test network) comes from the auditor's own copy: their
 * checkout's `ceremony-data/ceremony.json` or `--config FILE`. A publication (or, for `ceremony
 * fetch`, the ceremony a coordinator serves) that says otherwise is refused
 * (`config.publication_mismatch`), naming the first difference: a coordinator that could choose
 * these would audit `passed` with keys for another circuit, a verifier of another name, or fewer
 * contributions than the auditor expects.
 */
import { readFile } from 'node:fs/promises';
import { parseCeremonyConfigText, type CeremonyConfig } from '../config/ceremony-config.ts';
import { CoordinatorError } from '../errors.ts';

/** Where an auditor's checkout holds its ceremony.json, from the checkout's root (the commands' default). */
export const DEFAULT_AUDITOR_CONFIG = 'ceremony-data/ceremony.json';

/** The fields compared, as far as each side has them (a coordinator's GET /api/ceremony has no hashes). */
export interface ComparableConfig {
  id: string;
  testNetwork: boolean;
  minContributions?: number;
  ptauHash?: string;
  circuits: ReadonlyArray<{ name: string; verifier: string; publicInputs: number; r1csHash?: string }>;
}

type TopField = 'id' | 'testNetwork' | 'minContributions' | 'ptauHash';
type CircuitField = 'name' | 'verifier' | 'publicInputs' | 'r1csHash';

/** Which fields a comparison covers: all of them for a publication's ceremony.json. */
export interface ComparedFields {
  top: readonly TopField[];
  circuit: readonly CircuitField[];
}

const EVERY_CONFIG_FIELD: ComparedFields = {
  top: ['id', 'testNetwork', 'minContributions', 'ptauHash'],
  circuit: ['name', 'verifier', 'publicInputs', 'r1csHash'],
};

/** How much of a value a message quotes: a whole BLAKE2b-512, not a coordinator's megabyte. */
const QUOTED_CHARS = 136;

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
}

/**
 * The first field in which `theirs` (named `theirName`: "the publication's ceremony.json") differs
 * from `yours`, in words, or undefined when they agree on every field of `fields`. Circuits are
 * compared position by position, so another order is a difference.
 */
function firstConfigDifference(
  yours: ComparableConfig,
  theirs: ComparableConfig,
  theirName: string,
  fields: ComparedFields = EVERY_CONFIG_FIELD,
): string | undefined {
  for (const field of fields.top) {
    if (yours[field] !== theirs[field])
      return `${field} is ${show(theirs[field])} in ${theirName}, ${show(yours[field])} in yours`;
  }
  const count = Math.max(yours.circuits.length, theirs.circuits.length);
  for (let i = 0; i < count; i++) {
    const mine = yours.circuits[i];
    const other = theirs.circuits[i];
    if (!mine) return `${theirName} lists a circuit ${i + 1}, ${show(other!.name)}, which yours does not`;
    if (!other) return `yours lists a circuit ${i + 1}, ${show(mine.name)}, which ${theirName} does not`;
    for (const field of fields.circuit) {
      if (mine[field] !== other[field])
        return (
          `circuit ${i + 1} (${show(mine.name)} in yours): its ${field} is ${show(other[field])} in ${theirName}, ` +
          `${show(mine[field])} in yours`
        );
    }
  }
  return undefined;
}

/** Refuses `theirs` unless it agrees with `yours` (`yourName` names the auditor's file in the message). */
export function refuseOtherConfig(
  yours: ComparableConfig,
  theirs: ComparableConfig,
  theirName: string,
  yourName: string,
  fields: ComparedFields = EVERY_CONFIG_FIELD,
): void {
  const difference = firstConfigDifference(yours, theirs, theirName, fields);
  if (difference === undefined) return;
  throw new CoordinatorError(
    'config.publication_mismatch',
    `${theirName} is not your ceremony.json (${yourName}): ${difference}; ` +
      'the audit takes the circuits, verifiers, public inputs, pins and minContributions from yours, never from ' +
      'the coordinator',
  );
}

/**
 * The auditor's ceremony.json at `file`, its text and its configuration with relative paths anchored
 * at `dataDir` (the folder audited or fetched into). A missing file is a usage error saying where
 * one comes from.
 */
export async function readAuditorConfig(
  file: string,
  dataDir: string,
): Promise<{ text: string; config: CeremonyConfig }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new CoordinatorError(
      'input.file_not_found',
      `no ceremony.json of your own at ${file}: run this from your checkout of the ceremony's repository ` +
        "(its ceremony-data/ceremony.json), or give --config FILE (never the coordinator's copy)",
    );
  }
  return { text, config: parseCeremonyConfigText(text, file, dataDir) };
}
