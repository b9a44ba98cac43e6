/**
 * Deployed verifier contracts against the ceremony (`ceremony verify-deployment --ceremony`, `--compare`,
 * `verify-receipt --deployment`): each a MISMATCH of one verifier, named with it.
 */
import { type ErrorEntry, RERUN } from './error-entry.ts';

export const DEPLOYMENT_CODES = {
  /**
   * A ceremony folder whose ceremony.json names other circuits than the transcript's chains, or a verifier name the
   * transcript's `finalised` entry does not commit for that circuit's final key (names swapped, a circuit dropped).
   */
  'deployment.verifier_name_mismatch': {
    kind: 'operator',
    what: 'The ceremony folder pairs a verifier name with another circuit’s final key than its transcript does.',
    next: 'Check against the ceremony’s own files, with your own ceremony.json; do not trust those contracts.',
  },
  /** A constant of the final verification key (α1, β2, γ2, δ2, an IC point) is not in the deployed runtime code. */
  'deployment.constant_mismatch': {
    kind: 'operator',
    what: 'A deployed verifier contract does not carry the whole verification key of the ceremony’s final key.',
    next: 'Do not trust that contract: it may accept forged proofs.',
  },
  /** The deployed runtime code is not the recompiled verifier of the final key (metadata trailer aside). */
  'deployment.bytecode_mismatch': {
    kind: 'operator',
    what: 'A deployed verifier contract is not the ceremony’s verifier as compiled with the recorded compiler.',
    next: 'Do not trust that contract until its code is explained.',
  },
  /**
   * The deployed code could not be compared with the recompiled verifier (no committed compiler record, one outside
   * the documented settings, or a source solc did not compile): a MISMATCH, since its constants alone prove little.
   */
  'deployment.not_recompiled': {
    kind: 'operator',
    what:
      'A deployed verifier contract could not be compared with the ceremony’s verifier recompiled ' +
      'from its final key.',
    next: 'Give the settings the contract was compiled with (--compiler-settings), or do not trust that contract.',
  },
  /** A compiler record (final/compiler.json) that is not one, or holds a field or value outside the documented set. */
  'compiler.record_invalid': {
    kind: 'operator',
    what: 'The ceremony’s compiler record is not one, or asks for settings outside the documented set.',
    next: 'Compare the deployed code with your own settings (--compiler-settings), and ask the coordinator why.',
  },
  /** A verifier's runtime code on the second network (`--compare`) is not its code on the first. */
  'deployment.networks_differ': {
    kind: 'operator',
    what: 'A verifier contract on the second network has other code than on the first.',
    next: 'Check the second network’s contract on its own before trusting it.',
  },
  /** A manifest entry is not the δ of its final key, or names no verifier of the ceremony, or one is missing. */
  'deployment.manifest_mismatch': {
    kind: 'operator',
    what: 'The delta manifest does not agree with the ceremony’s final keys.',
    next: 'Use the manifest the ceremony published, and check it with `ceremony audit`.',
  },
  /** No contract code at the verifier's address. */
  'deployment.no_contract': {
    kind: 'operator',
    what: 'There is no contract at a verifier’s address.',
    next: 'Check the address in the verifiers file and the network.',
  },
  /** The JSON-RPC endpoint could not be reached, or its eth_getCode failed. */
  'deployment.rpc_unavailable': {
    kind: 'operator',
    what: 'The network’s JSON-RPC endpoint could not be reached or did not give a contract’s code.',
    next: RERUN,
  },
  /** `verify-receipt --deployment`: the verifiers file names no verifier of a receipt's circuit. */
  'deployment.no_verifier': {
    kind: 'operator',
    what: 'The verifiers file names no verifier contract of the receipt’s circuit.',
    next: 'Add the circuit’s verifier (e.g. VerifierTransact21) and its address to the verifiers file.',
  },
  /** `verify-receipt --deployment`: the receipt's circuit has no final key yet, so no verifier can carry it. */
  'deployment.not_finalised': {
    kind: 'operator',
    what: 'The receipt’s circuit is not finalised yet, so no deployed verifier can carry its final key.',
    next: 'Check the deployment once the ceremony is finalised.',
  },
  /** The JSON-RPC endpoint reports another chain id than the one asked for (`--chain-id`, `--compare-chain-id`). */
  'deployment.wrong_chain': {
    kind: 'operator',
    what: 'The JSON-RPC endpoint answers for another chain than the one the check was asked to read.',
    next: 'Give the endpoint of the network you mean to check, or the chain id it has.',
  },
  /**
   * A test-network ceremony's keys (ptau secret public) checked against a mainnet's verifiers, without
   * `--allow-test-ceremony`.
   */
  'deployment.test_ceremony_on_mainnet': {
    kind: 'operator',
    what: 'A test-network ceremony, whose secret is public, was checked against verifiers on a mainnet.',
    next: 'Check mainnet verifiers against the real ceremony; a test ceremony’s keys guard nothing.',
  },
} satisfies Record<string, ErrorEntry>;
