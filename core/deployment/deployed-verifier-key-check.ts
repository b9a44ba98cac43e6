/**
 * The receipt check's last link (`ceremony verify-receipt … --deployment RPC VERIFIERS`): the
 * deployed verifier of a receipt's circuit carries every constant (α1, β2, γ2, δ2, each IC point)
 * of the final key the receipt was just found in. The key's verification key is the one the
 * checker read from the key itself and held to the transcript's section hashes, so the chain runs
 * from the contributor's record to the contract without the published vkey or manifest in between.
 *
 * What a pass proves is what `checkDeployedVerifiers` proves: every constant is in the runtime code,
 * not that the code uses each as the verifier does; `verify-deployment --ceremony` adds the
 * recompiled comparison. Before finalisation there is no key to deploy: `deployment.not_finalised`.
 * Every circuit's verifier is read at the block the first was read at (`chain()`), so all verdicts
 * are about one state, as the endpoint reports it (trusted, not checked).
 */
import { CoordinatorError } from '../errors.ts';
import type { CheckedKeyHistory, ExtraKeyCheck } from '../receipts/receipt-checker.ts';
import type { VerificationKeyConstants } from '../receipts/verification-key.ts';
import { checkDeployedVerifiers } from './check-deployed-verifiers.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { describeChainHead, requireHttpUrl, type ChainHead, type ReadCodeOptions } from './deployed-code-reader.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';
import { parseVerificationKeyJson, type VerificationKeyJson } from './verification-key-json.ts';

/** The verifier checked for `circuit`: the one name of VERIFIERS that is `Verifier<Circuit>`. */
function verifierOf(addresses: UncheckedVerifierAddresses, circuit: string): string {
  const names = Object.keys(addresses).filter((name) => circuitOfVerifier(name) === circuit);
  if (names.length === 0) {
    const expected = `Verifier${circuit.charAt(0).toUpperCase()}${circuit.slice(1)}`;
    throw new CoordinatorError(
      'deployment.no_verifier',
      `the verifiers file names no verifier of ${circuit} (expected ${expected}), so its deployment was not checked`,
    );
  }
  return names[0]!;
}

/** snarkjs's exported form of the constants read from the key (what the deployment check takes). */
function asExportedKey(vk: VerificationKeyConstants, what: string): VerificationKeyJson {
  const g1 = (p: readonly [string, string]) => [...p, '1'];
  const g2 = (p: readonly [readonly [string, string], readonly [string, string]]) => [[...p[0]], [...p[1]], ['1', '0']];
  const exported = {
    protocol: 'groth16',
    curve: 'bn128',
    nPublic: vk.nPublic,
    vk_alpha_1: g1(vk.vk_alpha_1),
    vk_beta_2: g2(vk.vk_beta_2),
    vk_gamma_2: g2(vk.vk_gamma_2),
    vk_delta_2: g2(vk.vk_delta_2),
    IC: vk.IC.map(g1),
  };
  return parseVerificationKeyJson(exported, what);
}

export interface DeployedVerifierKeyCheck extends ExtraKeyCheck {
  /** The block every verifier was read at, once one was read. */
  chain(): ChainHead | undefined;
}

/**
 * The check, once per circuit: throws the deployment's verdict (its own code, naming the verifier
 * and address), or resolves with what it established. A malformed `rpcUrl` is refused here, before
 * any receipt is read (`usage.invalid_arguments`); an endpoint of another chain than
 * `options.chainId` is each circuit's `deployment.wrong_chain`.
 */
export function deployedVerifierKeyCheck(
  rpcUrl: string,
  addresses: UncheckedVerifierAddresses,
  options: Omit<ReadCodeOptions, 'at'> = {},
): DeployedVerifierKeyCheck {
  requireHttpUrl(rpcUrl);
  let head: ChainHead | undefined;
  return {
    step: 'deployment',
    proves:
      'the deployed verifier of its circuit carries every constant of that final key (α1, β2, γ2, δ2, each IC ' +
      'point), as the JSON-RPC endpoint reports its code at one block (its answers trusted, not checked); not ' +
      "that the code uses each as a verifier does (that is `verify-deployment --ceremony`'s recompiled comparison)",
    chain: () => head,
    async run(history: CheckedKeyHistory): Promise<string> {
      if (history.key !== 'final') {
        throw new CoordinatorError(
          'deployment.not_finalised',
          `${history.circuit} is not finalised (its key is the head, contribution ${history.index}): ` +
            'no verifier can carry its final key yet',
        );
      }
      const verifier = verifierOf(addresses, history.circuit);
      const verificationKey = history.verificationKey();
      const [verdict] = await checkDeployedVerifiers(
        rpcUrl,
        {
          [verifier]: {
            address: addresses[verifier] as string,
            verificationKey: asExportedKey(verificationKey, `the final key of ${history.circuit}`),
          },
        },
        {
          ...options,
          ...(head === undefined ? {} : { at: head }),
          onCodes: (read) => {
            head ??= read.chain;
          },
        },
      );
      if (!verdict!.match) throw new CoordinatorError(verdict!.code, `${verifier}: ${verdict!.reason}`);
      const ic = verificationKey.IC.length;
      return (
        `${verifier} at ${verdict!.address} carries α1, β2, γ2, δ2 and the ${ic} IC points of the final key ` +
        `(${describeChainHead(head!)})`
      );
    },
  };
}
