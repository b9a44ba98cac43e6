/**
 * The one check of deployed verifier code against final verification keys, shared by `ceremony
 * verify-deployment --ceremony` and `ceremony verify-receipt --deployment`. For each verifier:
 *  1. the key's δ is not its γ, and every constant of the key (α1, β2, γ2, δ2, each IC point) is a
 *     value the code pushes (`deployment.constant_mismatch` names the first missing: the most
 *     specific reason a wrong deployment has);
 *  2. the code is the verifier rendered from the key and compiled offline with the resolved compiler
 *     (core/deployment/recompile-verifiers.ts), byte for byte but for the metadata trailer's
 *     contents: `match`. Code that differs is `deployment.bytecode_mismatch`; code that could not be
 *     compared (no compiler resolved, the source not compiled) is `deployment.not_recompiled`, a
 *     MISMATCH too: constants alone prove neither where the code uses them nor that it verifies.
 * Only with `constantsOnly`, which a caller sets on an explicit request, is step 1 the whole check;
 * its verdict is then `constants-present`, never `match`, with what it did not prove.
 */
import type { Address, Hex } from 'viem';
import type { ErrorCode } from '../errors.ts';
import { DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage } from '../manifest/delta-equals-gamma.ts';
import { deltaEqualsGamma } from '../manifest/delta-manifest.ts';
import { checkVerifierConstants } from './check-verifier-constants.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { compareRuntimeCode } from './compare-networks.ts';
import { deployedGammaIsDelta } from './deployed-gamma-is-delta.ts';
import {
  readDeployedCodes,
  requireHttpUrl,
  UNREAD_CODE_ERRORS,
  type DeployedCode,
  type DeployedCodes,
  type ReadCodeOptions,
} from './deployed-code-reader.ts';
import { compilerLabel, recompileVerifiers, type VerifierCompiler } from './recompile-verifiers.ts';
import {
  parseVerificationKeyJson,
  verificationKeyConstants,
  type VerificationKeyJson,
} from './verification-key-json.ts';

/** How the code is judged: against the recompiled verifier (the default), or on explicit request its constants only. */
export type VerifierCodeMode = { constantsOnly: true } | { constantsOnly?: false; compiler: VerifierCompiler };

/** The verdict word of a check of constants only: not `match`, which only the byte-for-byte comparison gives. */
export const CONSTANTS_ONLY_WORD = 'constants-present';

export type DeployedVerifierVerdict =
  | {
      verifier: string;
      match: true;
      /** Set when only the constants were checked (on request): the verdict word printed instead of `match`. */
      weaker?: typeof CONSTANTS_ONLY_WORD;
      address: Address;
      runtimeCode: Hex;
      /** What the verdict proved, one statement. */
      proved: string;
      /** With `weaker`: what it did not prove. */
      notProved?: string;
    }
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

type Refusal = Extract<DeployedVerifierVerdict, { match: false }>;

export interface DeployedVerifierCode {
  verifier: string;
  address: Address;
  runtimeCode: Hex;
  verificationKey: VerificationKeyJson;
}

function refusal(verifier: string, code: ErrorCode, reason: string, extra: Partial<Refusal> = {}): Refusal {
  const defined = Object.entries(extra).filter(([, value]) => value !== undefined);
  return { verifier, match: false, code, reason, ...Object.fromEntries(defined) };
}

/** Step 1 alone: the key's δ ≠ γ, then every constant of the key in the code; undefined when both hold. */
function constantsRefusal({ verifier, address, runtimeCode, verificationKey }: DeployedVerifierCode) {
  const circuit = circuitOfVerifier(verifier) ?? verifier;
  const refused = (code: ErrorCode, reason: string, firstDifference?: string): Refusal =>
    refusal(verifier, code, reason, { firstDifference, address, runtimeCode });
  // A key without Phase 2 is refused whatever the code holds: every proof against it is forgeable.
  if (deltaEqualsGamma(verificationKey)) {
    return refused(DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage(circuit, verifier, 'the verification key'));
  }
  const constants = checkVerifierConstants(runtimeCode, verificationKey);
  if (constants.match) return undefined;
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

const constantsStatement = (key: VerificationKeyJson, address: Address): string =>
  `every constant of the final key (α1, β2, γ2, δ2, IC[0] to IC[${key.IC.length - 1}]) ` +
  `is in the runtime code at ${address}`;

/** Judges each deployed code against its key; verdicts in the order of `codes`. One solc call for them all. */
export async function judgeVerifierCodes(
  codes: readonly DeployedVerifierCode[],
  mode: VerifierCodeMode,
): Promise<DeployedVerifierVerdict[]> {
  const verdicts = codes.map((item) => constantsRefusal(item));
  if (mode.constantsOnly === true) {
    return codes.map(
      (item, i): DeployedVerifierVerdict =>
        verdicts[i] ?? {
          ...{ verifier: item.verifier, match: true, weaker: CONSTANTS_ONLY_WORD },
          ...{ address: item.address, runtimeCode: item.runtimeCode },
          proved: constantsStatement(item.verificationKey, item.address),
          notProved:
            'that the code is the verifier, or uses them where the verifier does (checked for its constants only, as ' +
            'asked: without --constants-only the code is compared with the recompiled verifier, byte for byte)',
        },
    );
  }
  const { compiler } = mode;
  const pending = codes.filter((_, i) => verdicts[i] === undefined);
  const recompiled =
    compiler.ok && pending.length > 0
      ? await recompileVerifiers(compiler, new Map(pending.map((item) => [item.verifier, item.verificationKey])))
      : new Map();
  return codes.map((item, i): DeployedVerifierVerdict => {
    const refused = verdicts[i];
    if (refused !== undefined) return refused;
    const { verifier, address, runtimeCode } = item;
    const compiled = recompiled.get(verifier);
    if (!compiler.ok || compiled?.ok !== true) {
      const why = !compiler.ok ? compiler.why : (compiled?.why ?? 'not compiled');
      return refusal(
        verifier,
        'deployment.not_recompiled',
        `the runtime code at ${address} was not compared with the final key's verifier (${why}); its constants ` +
          'alone prove neither that it is the verifier nor how it uses them',
        { address, runtimeCode },
      );
    }
    const compared = compareRuntimeCode(runtimeCode, compiled.runtimeCode);
    if (!compared.same) {
      return refusal(
        verifier,
        'deployment.bytecode_mismatch',
        `the runtime code at ${address} is not the verifier of the final key ` +
          `compiled with ${compilerLabel(compiler)}: ` +
          `they differ from byte ${compared.firstDifferingByte} (${compared.lengths[0]} and ${compared.lengths[1]} ` +
          'bytes long)',
        { address, runtimeCode },
      );
    }
    return {
      ...{ verifier, match: true, address, runtimeCode },
      // Equal code carries every constant, each used where the verifier uses it: one statement says both.
      proved:
        `the runtime code at ${address} is the final key's verifier compiled with ${compilerLabel(compiler)}, ` +
        "byte for byte but for the metadata trailer's contents",
    };
  });
}

export interface DeployedVerifierTarget {
  /** The contract's address on the network checked (0x + 40 hex digits; EIP-55 if mixed case). */
  address: string;
  verificationKey: VerificationKeyJson;
}

export type CheckDeployedOptions = ReadCodeOptions &
  VerifierCodeMode & {
    /** Receives the code read and the block it was read at (`read.chain`). */
    onCodes?: (codes: DeployedCodes) => void;
  };

/**
 * Reads every verifier of `targets` on the network at `rpcUrl`, all at one block, and judges each;
 * the verdicts come in the order of `targets`. Throws for a malformed `rpcUrl`
 * (`usage.invalid_arguments`) and an endpoint of another chain than `options.chainId`
 * (`deployment.wrong_chain`); an endpoint that cannot be reached is a `deployment.rpc_unavailable`
 * verdict for each verifier.
 */
export async function checkDeployedVerifiers(
  rpcUrl: string,
  targets: Readonly<Record<string, DeployedVerifierTarget>>,
  options: CheckDeployedOptions,
): Promise<DeployedVerifierVerdict[]> {
  requireHttpUrl(rpcUrl);
  const names = Object.keys(targets);
  const read = await readDeployedCodes(rpcUrl, new Map(names.map((name) => [name, targets[name]!.address])), options);
  options.onCodes?.(read);
  const verdicts = new Map<string, DeployedVerifierVerdict>();
  const judged: DeployedVerifierCode[] = [];
  for (const verifier of names) {
    const deployed = read.codes.get(verifier);
    if (deployed?.ok !== true) {
      verdicts.set(verifier, notRead(verifier, deployed, read.failure));
      continue;
    }
    try {
      // Typed, but it crossed a module boundary: its shape is checked before any constant is read.
      const verificationKey = parseVerificationKeyJson(
        targets[verifier]!.verificationKey,
        `the verification key of ${verifier}`,
      );
      judged.push({ verifier, address: deployed.address, runtimeCode: deployed.code, verificationKey });
    } catch (error) {
      verdicts.set(
        verifier,
        refusal(verifier, 'input.invalid', (error as Error).message, { address: deployed.address }),
      );
    }
  }
  const results = await judgeVerifierCodes(judged, options);
  judged.forEach((item, i) => verdicts.set(item.verifier, results[i]!));
  return names.map((verifier) => verdicts.get(verifier)!);
}

function notRead(verifier: string, deployed: DeployedCode | undefined, failure: string | undefined): Refusal {
  if (deployed === undefined)
    return refusal(verifier, 'deployment.rpc_unavailable', failure ?? 'the code was not read');
  if (deployed.ok) throw new Error('unreachable: code was read');
  return refusal(verifier, UNREAD_CODE_ERRORS[deployed.kind], deployed.reason, { address: deployed.address });
}
