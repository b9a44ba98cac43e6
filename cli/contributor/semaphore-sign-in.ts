/**
 * Anonymous sign-in from a terminal with a Semaphore identity, in the page's steps
 * (client/semaphore-sign-in.ts): the group's public member list and a one-time challenge
 * from the coordinator, the membership proof made here, only the proof sent. The identity (an
 * exported private key, from a file or an environment variable) stays in this process: it is
 * never printed, written or sent.
 *
 * The proving artifacts (circuit and key for the group's depth) come from the
 * @zk-kit/semaphore-artifacts package when it is installed, else from the coordinator, which serves
 * the same files beside its page (/semaphore-artifacts/); downloaded ones live in a private
 * temporary folder for the length of the proof. Whatever their source, the proof is checked here
 * against the verification key shipped with @semaphore-protocol/proof before it is sent, so
 * damaged or doctored artifacts cannot make us send something other than a valid proof.
 * A sign-in whose answer was lost to a coordinator restart is made again from a new challenge.
 */
import { createWriteStream } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CoordinatorError } from '../../core/errors.ts';
import { type SignedIn } from '../../client/api-client.ts';
import { signInWithSemaphoreProof } from '../../client/semaphore-sign-in.ts';
import { type CoordinatorClient } from './coordinator-client.ts';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Where the identity is read from: `--semaphore-identity FILE` or `--semaphore-identity-env NAME`. */
export type IdentitySource = { file: string } | { envVar: string };

/** Reads the exported identity (usage errors, exit 2, when it is missing or not one). */
export async function readSemaphoreIdentity(source: IdentitySource): Promise<string> {
  let exported: string | undefined;
  if ('file' in source) {
    exported = await readFile(source.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT')
        throw new CoordinatorError('input.file_not_found', `no Semaphore identity file at ${source.file}`);
      throw new CoordinatorError(
        'input.invalid',
        `cannot read the Semaphore identity file ${source.file} (${error.code ?? error.message})`,
      );
    });
  } else {
    exported = process.env[source.envVar];
    if (!exported)
      throw new CoordinatorError(
        'usage.invalid_arguments',
        `the environment variable ${source.envVar} is not set (it should hold an exported Semaphore identity)`,
      );
  }
  exported = exported.trim();
  const { Identity } = await import('@semaphore-protocol/identity');
  try {
    // Identity.import takes any text (invalid base64 characters are skipped): check the shape first.
    if (!BASE64.test(exported) || exported.length % 4 !== 0) throw new Error('not base64');
    Identity.import(exported);
  } catch {
    // Never echo what was read: it may be a secret in the wrong format.
    const where = 'file' in source ? `the file ${source.file}` : `the variable ${source.envVar}`;
    throw new CoordinatorError(
      'input.invalid',
      `${where} does not hold an exported Semaphore identity (a base64 private key, as the page's "export" gives it)`,
    );
  }
  return exported;
}

interface Artifacts {
  wasm: string;
  zkey: string;
  cleanup(): Promise<void>;
}

async function installedArtifacts(depth: number): Promise<Artifacts | undefined> {
  try {
    const dir = path.dirname(createRequire(import.meta.url).resolve('@zk-kit/semaphore-artifacts/package.json'));
    const files = { wasm: path.join(dir, `semaphore-${depth}.wasm`), zkey: path.join(dir, `semaphore-${depth}.zkey`) };
    await Promise.all([access(files.wasm), access(files.zkey)]);
    return { ...files, cleanup: async () => {} };
  } catch {
    return undefined;
  }
}

async function downloadedArtifacts(client: CoordinatorClient, depth: number): Promise<Artifacts> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-semaphore-'));
  try {
    const files = { wasm: path.join(dir, 'circuit.wasm'), zkey: path.join(dir, 'circuit.zkey') };
    for (const [kind, file] of Object.entries(files)) {
      const response = await client.fetch('GET', `/semaphore-artifacts/semaphore-${depth}.${kind}`, {
        timeoutMs: 120_000,
      });
      await pipeline(Readable.fromWeb(response.body as never), createWriteStream(file, { mode: 0o600 }));
    }
    return { ...files, cleanup: () => rm(dir, { recursive: true, force: true }) };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

export async function signInWithSemaphore(
  client: CoordinatorClient,
  exported: string,
  tell: (line: string) => void,
): Promise<SignedIn> {
  const { Identity } = await import('@semaphore-protocol/identity');
  const commitment = Identity.import(exported).commitment.toString();
  return signInWithSemaphoreProof<SignedIn>({
    api: client,
    exported,
    commitment,
    artifacts: async (depth) => (await installedArtifacts(depth)) ?? (await downloadedArtifacts(client, depth)),
    words: {
      proving: 'proving your membership of the group here (a few seconds)…',
      proofChecksBusy: 'the coordinator is busy checking other sign-in proofs; sending the same proof again shortly',
      // What the page says, in the terminal's words.
      notInGroup: (commitment) => `this identity's commitment (${commitment}) is not in the ceremony's group yet`,
    },
    say: tell,
    checkProof: true,
    onRestart: (retry) => {
      if (retry.attempt === 1) tell(`the coordinator did not answer (${retry.reason}); signing in again shortly`);
    },
  });
}
