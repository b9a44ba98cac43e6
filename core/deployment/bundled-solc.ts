/**
 * The Solidity compiler this project ships: solc-js from npm (`solc`, WebAssembly, no download:
 * its `loadRemoteVersion` is never called), whose package version is the compiler's release. It
 * is loaded only when something is compiled (about a second and 100 MB), never to read its
 * version.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The release of the bundled compiler, e.g. `0.8.37`. */
export function bundledSolcVersion(): string {
  const manifest = JSON.parse(readFileSync(require.resolve('solc/package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

export interface SolcStandardOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<
    string,
    Record<string, { evm: { deployedBytecode: { object: string; immutableReferences?: Record<string, unknown> } } }>
  >;
}

/** Runs the bundled compiler on a Standard JSON input; solc reports its own errors in the output. */
export async function compileWithBundledSolc(input: unknown): Promise<SolcStandardOutput> {
  const solc = (await import('solc')).default as { compile(input: string): string };
  return JSON.parse(solc.compile(JSON.stringify(input))) as SolcStandardOutput;
}
