/**
 * Solidity verifier of a final key: snarkjs's own Groth16 template, with the contract named as the
 * manifest names it (`VerifierTransact21`), so deployed bytecode and manifest line up by name.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as snarkjs from 'snarkjs';

let templateText: Promise<string> | undefined;

function groth16Template(): Promise<string> {
  if (!templateText) {
    // snarkjs's package exports hide its folders; its CommonJS build sits in <package>/build.
    const main = createRequire(import.meta.url).resolve('snarkjs');
    templateText = readFile(path.join(path.dirname(main), '..', 'templates', 'verifier_groth16.sol.ejs'), 'utf8');
  }
  return templateText;
}

export async function exportSolidityVerifier(finalZkeyPath: string, contractName: string): Promise<string> {
  const source = await snarkjs.zKey.exportSolidityVerifier(finalZkeyPath, { groth16: await groth16Template() });
  const renamed = source.replace(/\bcontract Groth16Verifier\b/, `contract ${contractName}`);
  if (renamed === source)
    throw new Error('the snarkjs verifier template no longer declares `contract Groth16Verifier`');
  return renamed;
}
