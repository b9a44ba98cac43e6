/**
 * A candidate zkey refused as the next link of a chain: the verifier's verdicts, never retried. The
 * contributor gets another turn, so each says so.
 */
import { type ErrorEntry, RETRY_TURN, RETRY_TURN_TERMINAL, refusedFile } from './error-entry.ts';

export const CONTRIBUTION_REFUSAL_CODES = {
  'zkey.malformed': refusedFile(
    'refusal',
    'the file that arrived is not a well-formed key (it may have been damaged on the way).',
  ),
  /**
   * An uploaded whole key whose section table is not the one a contribution on the head has (the head's ten ids in
   * ascending order, its sizes but the history's, one record longer): refused before a byte of it is hashed.
   */
  'zkey.section_table_mismatch': refusedFile(
    'refusal',
    'the file that arrived is not laid out as a contribution on the current key (its sections or their sizes differ).',
  ),
  'zkey.not_groth16': refusedFile('refusal', 'the file that arrived is not a Groth16 key.'),
  /** A skeleton (zkey-delta-v1) that is not one contribution on top of the head; the message names the rule. */
  'delta.malformed': refusedFile('refusal', 'the part of the key that was sent does not fit on the current key.'),
  /** A skeleton made on an earlier head than the chain's (downloaded before another contribution landed). */
  'delta.stale_head': refusedFile('conflict', 'it was built on an older key; someone else’s contribution came first.'),
  'contribution.wrong_circuit': refusedFile('refusal', 'it was made for a different circuit.'),
  'contribution.header_mismatch': refusedFile('refusal', 'its header does not match the circuit’s key.'),
  'contribution.stale': refusedFile(
    'conflict',
    'it was built on an older key; someone else’s contribution came first.',
  ),
  'contribution.no_new_contribution': refusedFile('refusal', 'it adds no new contribution to the key.'),
  'contribution.multiple_new_contributions': refusedFile('refusal', 'it adds more than one contribution at once.'),
  'contribution.history_mismatch': refusedFile('refusal', 'it changes earlier contributions of the chain.'),
  'contribution.unexpected_type': refusedFile('refusal', 'it is a beacon, not a contribution.'),
  'contribution.delta_unchanged': refusedFile('refusal', 'it leaves the key’s secret part unchanged.'),
  'contribution.delta_mismatch': refusedFile('refusal', 'its published values do not match the key it produced.'),
  'contribution.invalid_proof_of_knowledge': refusedFile(
    'refusal',
    'its proof that you know your secret does not check out (the file was probably damaged on the way).',
  ),
  'contribution.l_section_invalid': refusedFile(
    'refusal',
    'part of the key (the L section) was not updated consistently (the file was probably damaged on the way).',
  ),
  'contribution.h_section_invalid': refusedFile(
    'refusal',
    'part of the key (the H section) was not updated consistently (the file was probably damaged on the way).',
  ),
  'contribution.point_not_on_curve': refusedFile(
    'refusal',
    'it contains values that are not valid curve points (the file was probably damaged on the way).',
  ),
  /**
   * The candidate's L or H holds the point at infinity elsewhere than the head's (an honest contribution keeps them).
   */
  'contribution.identity_pattern_changed': refusedFile(
    'refusal',
    'some of its points are empty (the point at infinity) where the ' +
      'previous key’s are not, or the other way round; a real contribution ' +
      'never does that.',
  ),
  'contribution.invalid': refusedFile('refusal', 'it is not a valid next link of the chain.'),
  /** Verified, but another link was committed first: it can no longer extend the chain. */
  'contribution.not_next': {
    kind: 'conflict',
    refusesContribution: true,
    what: 'Someone else’s contribution was added first, so yours no longer fits the chain.',
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  },
} satisfies Record<string, ErrorEntry>;
