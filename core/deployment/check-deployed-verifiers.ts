/**
 * The deployed verifiers against their verification keys, over JSON-RPC: for each verifier name →
 * { address, verificationKey }, read the runtime code (`eth_getCode`) and require every constant
 * of the key in it (`checkVerifierConstants`). Used by `ceremony verify-deployment --ceremony`
 * (which adds the recompiled comparison) and by the receipt check's `--deployment`.
 *
 * Verdicts, each with its code: `deployment.constant_mismatch` (names the first constant missing,
 * e.g. `IC[3].x`), `vkey.delta_equals_gamma` (the key's δ is its γ, or the code's γ was set to its
 * δ), `deployment.no_contract` (no code at the address), `deployment.rpc_unavailable` (the
 * endpoint or its eth_getCode failed), `input.invalid` (not an address, or not a Groth16 key in
 * snarkjs's shape). A match proves what `checkVerifierConstants` proves, no more: every constant is
 * in the code, not that the code uses each as the verifier does.
 */
import type { Address, Hex } from 'viem';
import type { ErrorCode } from '../errors.ts';
import { DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage } from '../manifest/delta-equals-gamma.ts';
import { deltaEqualsGamma } from '../manifest/delta-manifest.ts';
import { checkVerifierConstants } from './check-verifier-constants.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { deployedGammaIsDelta } from './deployed-gamma-is-delta.ts';
import {
  readDeployedCodes,
  requireHttpUrl,
  UNREAD_CODE_ERRORS,
  type DeployedCode,
  type DeployedCodes,
  type ReadCodeOptions,
} from './deployed-code-reader.ts';
import {
  parseVerificationKeyJson,
  verificationKeyConstants,
  type VerificationKeyJson,
} from './verification-key-json.ts';

export interface DeployedVerifierTarget {
  /** The contract's address on the network checked (0x + 40 hex digits; EIP-55 if mixed case). */
  address: string;
  verificationKey: VerificationKeyJson;
}

export type DeployedVerifierVerdict =
  | { verifier: string; match: true; address: Address; runtimeCode: Hex }
  | {
      verifier: string;
      match: false;
      code: ErrorCode;
      /** One line, naming the address (and the constant) where there is one; not the verifier's name. */
      reason: string;
      /** With `deployment.constant_mismatch` (and a γ set to δ): the first constant missing, e.g. `IC[3].x`. */
      firstDifference?: string;
      address?: Address;
      runtimeCode?: Hex;
    };

export interface CheckDeployedOptions extends ReadCodeOptions {
  /** Receives the code read and the block it was read at (`read.chain`). */
  onCodes?: (codes: DeployedCodes) => void;
}

/**
 * Checks every verifier of `targets` on the network at `rpcUrl`, all at one block; the verdicts
 * come in the order of `targets`. Throws for a malformed `rpcUrl` (`usage.invalid_arguments`) and
 * an endpoint of another chain than `options.chainId` (`deployment.wrong_chain`); an endpoint
 * that cannot be reached is a `deployment.rpc_unavailable` verdict for each verifier.
 */
export async function checkDeployedVerifiers(
  rpcUrl: string,
  targets: Readonly<Record<string, DeployedVerifierTarget>>,
  options: CheckDeployedOptions = {},
): Promise<DeployedVerifierVerdict[]> {
  requireHttpUrl(rpcUrl);
  const names = Object.keys(targets);
  const read = await readDeployedCodes(rpcUrl, new Map(names.map((name) => [name, targets[name]!.address])), options);
  options.onCodes?.(read);
  return names.map((verifier) => {
    const deployed = read.codes.get(verifier);
    if (deployed?.ok !== true) return notRead(verifier, deployed, read.failure);
    let verificationKey: VerificationKeyJson;
    try {
      // Typed, but it crossed a module boundary: its shape is checked before any constant is read.
      verificationKey = parseVerificationKeyJson(
        targets[verifier]!.verificationKey,
        `the verification key of ${verifier}`,
      );
    } catch (error) {
      return refusal(verifier, 'input.invalid', (error as Error).message, { address: deployed.address });
    }
    return judgeDeployedCode(verifier, deployed.address, deployed.code, verificationKey);
  });
}

type Refusal = Extract<DeployedVerifierVerdict, { match: false }>;

function refusal(verifier: string, code: ErrorCode, reason: string, extra: Partial<Refusal> = {}): Refusal {
  const defined = Object.entries(extra).filter(([, value]) => value !== undefined);
  return { verifier, match: false, code, reason, ...Object.fromEntries(defined) };
}

function notRead(verifier: string, deployed: DeployedCode | undefined, failure: string | undefined): Refusal {
  if (deployed === undefined)
    return refusal(verifier, 'deployment.rpc_unavailable', failure ?? 'the code was not read');
  if (deployed.ok) throw new Error('unreachable: code was read');
  return refusal(verifier, UNREAD_CODE_ERRORS[deployed.kind], deployed.reason, { address: deployed.address });
}

/** The verdict on code read at `address`: the key's δ ≠ γ, then every constant of the key in the code. */
export function judgeDeployedCode(
  verifier: string,
  address: Address,
  runtimeCode: Hex,
  verificationKey: VerificationKeyJson,
): DeployedVerifierVerdict {
  const circuit = circuitOfVerifier(verifier) ?? verifier;
  const refused = (code: ErrorCode, reason: string, firstDifference?: string): Refusal =>
    refusal(verifier, code, reason, { firstDifference, address, runtimeCode });
  // A key without Phase 2 is refused whatever the code holds: every proof against it is forgeable.
  if (deltaEqualsGamma(verificationKey)) {
    return refused(DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage(circuit, verifier, 'the verification key'));
  }
  const constants = checkVerifierConstants(runtimeCode, verificationKey);
  if (constants.match) return { verifier, match: true, address, runtimeCode };
  const first = constants.firstDifference;
  if (deployedGammaIsDelta(runtimeCode, verificationKey)) {
    const where = `the verifier deployed at ${address} (δ's constants stand where γ's should; first missing: ${first})`;
    return refused(DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage(circuit, verifier, where), first);
  }
  const value = verificationKeyConstants(verificationKey).find((c) => c.label === first)!.value;
  return refused(
    'deployment.constant_mismatch',
    `${first} of the verification key (0x${value.toString(16)}) is not in the runtime bytecode at ${address}`,
    first,
  );
}
