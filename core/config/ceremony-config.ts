/**
 * The ceremony's configuration (`ceremony.json` in the data folder), validated once at load into
 * a frozen object with absolute paths. A bad field is named in the error.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { CoordinatorError } from '../errors.ts';

export const CONFIG_FILE_NAME = 'ceremony.json';

/** A BLAKE2b-512 as `b2sum` prints it (any case), kept in lower case. */
const blake2b512Schema = (what: string) =>
  z
    .string()
    .regex(/^[0-9a-fA-F]{128}$/, `${what} is a BLAKE2b-512, 128 hex digits as b2sum prints it`)
    .transform((hash) => hash.toLowerCase());

const circuitSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'a circuit name is letters, digits and underscores'),
    verifier: z.string().regex(/^[A-Z][A-Za-z0-9_]*$/, 'a verifier name is a Solidity contract name'),
    publicInputs: z.number().int().positive(),
    r1cs: z.string().min(1),
    /**
     * The r1cs's BLAKE2b-512 (as `b2sum` prints it), when the ceremony pins it: `init` and the
     * audit refuse another file (r1cs.hash_mismatch).
     */
    r1csHash: blake2b512Schema('an r1cs hash').optional(),
  })
  .strict();

const configSchema = z
  .object({
    /** Identifies the ceremony (also the scope of anonymous sign-in proofs). */
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'an id is lower-case letters, digits and dashes'),
    title: z.string().min(1).default('Groth16 Phase 2 ceremony'),
    /**
     * True for a test network ceremony: its keys may be built on a powers of tau whose secret is
     * known, and must never be used for mainnet verifiers.
     */
    testNetwork: z.boolean().default(false),
    ptau: z.string().min(1),
    /**
     * The ptau's BLAKE2b-512 (as `b2sum` prints it), when the ceremony pins it: `init` refuses another
     * file (ptau.hash_mismatch), and an auditor's own ceremony.json that pins it pins the audit's ptau.
     */
    ptauHash: blake2b512Schema('a ptau hash').optional(),
    /**
     * Contributions every chain needs before it may be finalised (beyond contribution 0, the
     * beacon not counted): `ceremony finalise`, the coordinator's finalise and the audit refuse
     * fewer. At least 1: a chain finalised with none has a δ anyone can compute from the beacon.
     */
    minContributions: z.number().int().min(1).default(1),
    circuits: z.array(circuitSchema).min(1),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.circuits.forEach((circuit, index) => {
      for (const key of ['name', 'verifier'] as const) {
        const label = `${key}:${circuit[key]}`;
        if (seen.has(label)) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ['circuits', index, key],
            message: `duplicate ${key} "${circuit[key]}"`,
          });
        }
        seen.set(label, index);
      }
    });
  });

export interface CircuitConfig {
  name: string;
  verifier: string;
  publicInputs: number;
  /** Absolute path of the circuit's r1cs. */
  r1csPath: string;
  /** The path as written in ceremony.json, relative to the data folder. */
  r1cs: string;
  /** The r1cs's pinned BLAKE2b-512 (lower-case hex), when ceremony.json pins it. */
  r1csHash?: string;
}

export interface CeremonyConfig {
  dataDir: string;
  id: string;
  title: string;
  testNetwork: boolean;
  ptauPath: string;
  ptau: string;
  /** The ptau's pinned BLAKE2b-512 (lower-case hex), when ceremony.json pins it. */
  ptauHash?: string;
  /** Contributions each chain needs before finalisation (≥ 1). */
  minContributions: number;
  circuits: readonly CircuitConfig[];
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/** Parses an already-read configuration object (read from `file`). `dataDir` anchors its relative paths. */
function parseCeremonyConfig(raw: unknown, file: string, dataDir: string): CeremonyConfig {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CoordinatorError('config.invalid', `${file} is invalid: ${formatIssues(parsed.error)}`);
  }
  const absoluteDir = path.resolve(dataDir);
  const config: CeremonyConfig = {
    dataDir: absoluteDir,
    id: parsed.data.id,
    title: parsed.data.title,
    testNetwork: parsed.data.testNetwork,
    ptau: parsed.data.ptau,
    ptauPath: path.resolve(absoluteDir, parsed.data.ptau),
    ...(parsed.data.ptauHash === undefined ? {} : { ptauHash: parsed.data.ptauHash }),
    minContributions: parsed.data.minContributions,
    circuits: parsed.data.circuits.map((circuit) =>
      Object.freeze({ ...circuit, r1csPath: path.resolve(absoluteDir, circuit.r1cs) }),
    ),
  };
  return Object.freeze(config);
}

export async function loadCeremonyConfig(dataDir: string): Promise<CeremonyConfig> {
  const file = path.join(dataDir, CONFIG_FILE_NAME);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new CoordinatorError(
      'config.not_found',
      `no ceremony configuration at ${file} (is --data the right folder?)`,
    );
  }
  return parseCeremonyConfigText(text, file, dataDir);
}

/**
 * The configuration in `text`, read from `file` (how messages name it), its relative paths anchored
 * at `dataDir`: for a ceremony.json read elsewhere than in its data folder (`ceremony fetch --config`).
 */
export function parseCeremonyConfigText(text: string, file: string, dataDir: string): CeremonyConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new CoordinatorError('config.invalid', `${file} is not valid JSON: ${(error as Error).message}`);
  }
  return parseCeremonyConfig(raw, file, dataDir);
}

export function findCircuit(config: CeremonyConfig, name: string): CircuitConfig {
  const circuit = config.circuits.find((c) => c.name === name);
  if (!circuit) {
    // The name may be a URL's: quoted at a bounded length.
    const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
    throw new CoordinatorError(
      'circuit.unknown',
      `unknown circuit "${shown}"; this ceremony has: ${config.circuits.map((c) => c.name).join(', ')}`,
    );
  }
  return circuit;
}
