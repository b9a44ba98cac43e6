/**
 * Solidity verifier of a final key: snarkjs's own Groth16 template, rendered as snarkjs renders it
 * (its ejs, on the exported verification key), with the contract named as the manifest names it
 * (`VerifierTransact21`), so deployed bytecode and manifest line up by name. The deployment check
 * renders the same source from the published key to recompile it; `final/compiler.json`
 * (verifier-compiler-record.ts) says how.
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

/** snarkjs's template engine, resolved from snarkjs: the one its `zkey export solidityverifier` renders with. */
function snarkjsEjs(): { render(template: string, data: object): string } {
  return createRequire(import.meta.resolve('snarkjs'))('ejs') as { render(template: string, data: object): string };
}

/** The verifier of a verification key (snarkjs's JSON shape), its contract named `contractName`. */
export async function renderSolidityVerifier(verificationKey: object, contractName: string): Promise<string> {
  const source = snarkjsEjs().render(await groth16Template(), verificationKey);
  const renamed = source.replace(/\bcontract Groth16Verifier\b/, `contract ${contractName}`);
  if (renamed === source)
    throw new Error('the snarkjs verifier template no longer declares `contract Groth16Verifier`');
  return renamed;
}

export async function exportSolidityVerifier(finalZkeyPath: string, contractName: string): Promise<string> {
  return renderSolidityVerifier(await snarkjs.zKey.exportVerificationKey(finalZkeyPath), contractName);
}
