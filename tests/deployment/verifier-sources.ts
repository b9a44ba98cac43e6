/**
 * Solidity sources of Groth16 verifiers for the deployment tests, all from snarkjs's own template
 * (the one `ceremony finalise` uses), so the deployed bytecode is laid out as a real verifier's.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as snarkjs from 'snarkjs';
import type { DeltaEntry } from '../../core/manifest/delta-manifest.ts';

const require = createRequire(import.meta.url);
// ejs ships no types; snarkjs renders its templates with it, so it is always installed.
const ejs = require('ejs') as { render(template: string, data: Record<string, unknown>): string };

let template: Promise<string> | undefined;

function groth16Template(): Promise<string> {
  // snarkjs's package exports hide its folders; its CommonJS build sits in <package>/build.
  template ??= readFile(
    join(dirname(require.resolve('snarkjs')), '..', 'templates', 'verifier_groth16.sol.ejs'),
    'utf8',
  );
  return template;
}

function renamed(source: string, contractName: string): string {
  const result = source.replace(/\bcontract Groth16Verifier\b/, `contract ${contractName}`);
  if (result === source) throw new Error('the snarkjs template no longer declares contract Groth16Verifier');
  return result;
}

/** The verifier of a final key, exported by snarkjs and renamed to its manifest name. */
export async function verifierOfZkey(zkeyPath: string, contractName: string): Promise<string> {
  return renamed(
    await snarkjs.zKey.exportSolidityVerifier(zkeyPath, { groth16: await groth16Template() }),
    contractName,
  );
}

/**
 * A verifier rendered from a real verification key with its delta x replaced by `delta`
 * (manifest convention: deltax1 = vk_delta_2[0][1], deltax2 = vk_delta_2[0][0]). Proofs would not
 * verify against it; only the constants in the bytecode matter here.
 */
export async function verifierWithDelta(
  vkey: Record<string, unknown>,
  contractName: string,
  delta: DeltaEntry,
): Promise<string> {
  const vkDelta2 = vkey.vk_delta_2 as string[][];
  const patched = { ...vkey, vk_delta_2: [[delta.deltax2, delta.deltax1], ...vkDelta2.slice(1)] };
  return renamed(ejs.render(await groth16Template(), patched), contractName);
}

/**
 * A verifier rendered from a real verification key with its γ replaced by `gamma` (e.g. its own δ: no Phase 2 in
 * effect).
 */
export async function verifierWithGamma(
  vkey: Record<string, unknown>,
  contractName: string,
  gamma: string[][],
): Promise<string> {
  return renamed(ejs.render(await groth16Template(), { ...vkey, vk_gamma_2: gamma }), contractName);
}
