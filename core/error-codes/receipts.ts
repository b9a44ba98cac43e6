/**
 * Checking a signed receipt (`ceremony verify-receipt`, the public page): one code per way a receipt
 * can fail to be in the keys, so a contributor (and a test) tells them apart. No route answers them: the
 * check runs in the page or the terminal.
 */
import { type ErrorEntry } from './error-entry.ts';

export const RECEIPT_CODES = {
  /** The receipts file is not a receipt, a list of them, or the file the page or /api/me/receipts gives. */
  'receipt.malformed': {
    kind: 'usage',
    what: 'That is not a receipt: paste the receipts file this site gave you (or one receipt from it).',
    next: 'Check that you pasted the whole file, then try again.',
  },
  /**
   * Where the receipt is checked (a publication, a coordinator) publishes no usable receipt key, or
   * Ed25519 cannot be checked here.
   */
  'receipt.key_unavailable': {
    kind: 'upstream',
    what:
      'The receipt’s signature cannot be checked here: the coordinator’s receipt key is missing, or this browser ' +
      'cannot check Ed25519 signatures.',
    next: 'Use a current browser, or check from a terminal with `ceremony verify-receipt`.',
  },
  /** The coordinator or the publication could not give what the check reads (transcript, key ranges). */
  'receipt.source_unavailable': {
    kind: 'upstream',
    what: 'Part of what the check reads (the transcript or a part of a key) could not be fetched.',
    next:
      'Try again in a moment; if it persists, check from a terminal with `ceremony verify-receipt` on a published ' +
      'copy.',
  },
  'receipt.other_ceremony': {
    kind: 'refusal',
    what: 'This receipt belongs to another ceremony.',
    next: 'Check it on the page of the ceremony it names.',
  },
  'receipt.bad_signature': {
    kind: 'refusal',
    what:
      'The receipt’s signature does not match the coordinator’s receipt key: it was changed, or this coordinator ' +
      'did not sign it.',
    next:
      'Use the file exactly as you downloaded it. If it is untouched, report this publicly: the coordinator cannot ' +
      'vouch for its own receipt.',
  },
  'receipt.not_in_transcript': {
    kind: 'refusal',
    what: 'The public transcript does not record this contribution at this position with these hashes.',
    next:
      'Report it publicly with your receipt: the coordinator signed a ' +
      'contribution its public record does not hold.',
  },
  /** A step receipt (join, refusal, removal) whose entry the published queue log lacks, or holds otherwise. */
  'receipt.not_in_queue_log': {
    kind: 'refusal',
    what: 'The published queue log does not record the step this receipt is for.',
    next: 'Report it publicly with the receipt: the coordinator signed a step it did not publish.',
  },
  /** The final key (or, before finalisation, the head) does not descend from the receipt's contribution. */
  'receipt.not_in_key': {
    kind: 'refusal',
    what: 'The key does not descend from this contribution: its own history of contributions does not list it.',
    next: 'Report it publicly with your receipt: the published key was not built on your contribution.',
  },
  /** The key's own contribution history does not hold together, or does not match the transcript. */
  'receipt.history_invalid': {
    kind: 'refusal',
    what: 'The key’s own history of contributions does not hold together, or differs from the public transcript.',
    next: 'Report it publicly: the key was changed after the fact. Run the full audit for details.',
  },
  /**
   * Bytes of a key the check read by range are not the bytes the transcript's section hashes name:
   * the coordinator (or the publication) served the check another key than it recorded.
   */
  'receipt.served_bytes_mismatch': {
    kind: 'refusal',
    what: 'The parts of the key the coordinator sent this check are not the ones its public transcript records.',
    next:
      'Report it publicly with your receipt: the coordinator serves the check another key than it publishes. ' +
      'Check a published copy with `ceremony verify-receipt`.',
  },
  /** A record after the receipt's contribution has a proof of knowledge, or a δ step, that does not verify. */
  'receipt.proof_invalid': {
    kind: 'refusal',
    what:
      'A contribution recorded after yours does not prove knowledge of its secret, or does not build on the one ' +
      'before it: the final key may not carry your contribution’s secret.',
    next: 'Report it publicly with your receipt, and do not rely on that circuit’s final key.',
  },
  /** The key's δ in G2 is not its δ in G1 (e(δ1, g2) ≠ e(g1, δ2)). */
  'receipt.delta_mismatch': {
    kind: 'refusal',
    what: 'The key’s two copies of its secret-derived δ do not match: proofs made with it would not verify.',
    next: 'Report it publicly, and do not rely on that circuit’s final key.',
  },
  /**
   * The key's sections a contribution never changes (all but 2, 8, 9, 10), or α, β, γ of its header,
   * are not contribution 0's, as the transcript records them.
   */
  'receipt.sections_changed': {
    kind: 'refusal',
    what:
      'Parts of the final key that no contribution changes (the circuit’s public inputs, α, β, γ, …) differ from ' +
      'the first key’s: the key may accept forged proofs.',
    next: 'Report it publicly, and do not rely on that circuit’s final key.',
  },
} satisfies Record<string, ErrorEntry>;
