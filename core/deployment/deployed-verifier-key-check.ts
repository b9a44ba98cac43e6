/**
 * The receipt check's last link (`ceremony verify-receipt … --deployment RPC VERIFIERS`): the
 * deployed verifier of a receipt's circuit is the verifier of the final key the receipt was just
 * found in, judged by the one check of deployed verifiers (check-deployed-verifiers.ts): rendered
 * from that key's verification key, compiled offline with the ceremony's committed compiler record
 * (or the auditor's own settings), and compared byte for byte but for the metadata trailer. The
 * key's verification key is the one the checker read from the key itself and held to the
 * transcript's section hashes, so the chain runs from the contributor's record to the contract
 * without the published vkey or manifest in between; and since the contract then pins that key's δ,
 * it pins the key's whole history (docs/audit.md): a view of the ceremony without the receipt's
 * contribution cannot have a key whose verifier this contract is.
 *
 * Before finalisation there is no key to deploy: `deployment.not_finalised`. Every circuit's
 * verifier is read at the block the first was read at (`chain()`), so all verdicts are about one
 * state, as the endpoint reports it (trusted, not checked). Only `constantsOnly` (asked for
 * explicitly) checks the constants alone, and then says what it did not prove.
 */
import { CoordinatorError, isCoordinatorError } from '../errors.ts';
import type { PublicTranscript } from '../receipts/public-transcript.ts';
import type { CheckedKeyHistory, ExtraKeyCheck, ReceiptEvidence } from '../receipts/receipt-checker.ts';
import type { VerificationKeyConstants } from '../receipts/verification-key.ts';
import { checkDeployedVerifiers, CONSTANTS_ONLY_WORD } from './check-deployed-verifiers.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { describeChainHead, requireHttpUrl, type ChainHead, type ReadCodeOptions } from './deployed-code-reader.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';
import { committedCompiler, type VerifierCompiler } from './recompile-verifiers.ts';
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
  /** True when only the constants are checked (asked for explicitly): no verdict then says `match`. */
  readonly constantsOnly: boolean;
}

/**
 * How the deployed code is judged: against the verifier recompiled with the compiler `compiler()`
 * resolves (asked for once, when the first finalised key is checked), or on explicit request the
 * constants only.
 */
export type DeployedKeyCheckMode = { constantsOnly: true } | { compiler: () => Promise<VerifierCompiler> };

const PROVES_CODE =
  'the deployed verifier of its circuit is the verifier of that final key, compiled offline and compared byte for ' +
  'byte (metadata trailer aside), as the JSON-RPC endpoint reports its code at one block (its answers trusted, not ' +
  'checked); so the contract pins that key, and with it its whole history';
const PROVES_CONSTANTS =
  `the deployed verifier of its circuit carries every constant of that final key (${CONSTANTS_ONLY_WORD}, as asked); ` +
  'NOT proven: that the code is that verifier, or uses them as one does (without --constants-only it is compiled ' +
  'and compared byte for byte)';

/**
 * The check, once per circuit: throws the deployment's verdict (its own code, naming the verifier
 * and address), or resolves with what it established. A malformed `rpcUrl` is refused here, before
 * any receipt is read (`usage.invalid_arguments`); an endpoint of another chain than
 * `options.chainId` is each circuit's `deployment.wrong_chain`.
 */
export function deployedVerifierKeyCheck(
  rpcUrl: string,
  addresses: UncheckedVerifierAddresses,
  mode: DeployedKeyCheckMode,
  options: Omit<ReadCodeOptions, 'at'> = {},
): DeployedVerifierKeyCheck {
  requireHttpUrl(rpcUrl);
  let head: ChainHead | undefined;
  let compiler: Promise<VerifierCompiler> | undefined;
  const constantsOnly = 'constantsOnly' in mode;
  return {
    step: 'deployment',
    constantsOnly,
    proves: constantsOnly ? PROVES_CONSTANTS : PROVES_CODE,
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
      const judged = 'constantsOnly' in mode ? mode : { compiler: await (compiler ??= mode.compiler()) };
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
          ...judged,
          ...(head === undefined ? {} : { at: head }),
          onCodes: (read) => {
            head ??= read.chain;
          },
        },
      );
      if (!verdict!.match) throw new CoordinatorError(verdict!.code, `${verifier}: ${verdict!.reason}`);
      const ic = verificationKey.IC.length;
      // A key read from a format-1 entry's file is not bound to the transcript: the contract pins what was read.
      const unbound = history.bytesBound
        ? ''
        : '; NOT proven that this key is the one the transcript records (a format-1 entry: whole-file hash only)';
      return verdict!.weaker === undefined
        ? `${verifier} at ${verdict!.address} is the verifier of the final key (${describeChainHead(head!)})${unbound}`
        : `${verifier} at ${verdict!.address} carries α1, β2, γ2, δ2 and the ${ic} IC points of the final key, ` +
            `constants only (${describeChainHead(head!)})${unbound}`;
    },
  };
}

/**
 * The compiler a receipt check judges deployed code with: the evidence's `final/compiler.json`, held
 * to the hash the transcript's `finalised` entry commits (core/deployment/recompile-verifiers.ts).
 */
export async function evidenceCompiler(
  evidence: ReceiptEvidence,
  transcript: () => Promise<PublicTranscript>,
): Promise<VerifierCompiler> {
  const finalised = (await transcript()).entries.find((entry) => entry.type === 'finalised');
  let record: Uint8Array | undefined;
  try {
    record = await evidence.compilerRecord?.();
  } catch (error) {
    if (isCoordinatorError(error)) return { ok: false, why: error.message };
    throw error;
  }
  return committedCompiler(record, finalised?.compilerRecordHash);
}
