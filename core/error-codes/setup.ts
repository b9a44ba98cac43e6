/**
 * The ceremony's configuration and setup: ceremony.json, the circuits, the powers of tau, the
 * installation. A broken setup is the operator's problem, never the client's.
 */
import { type ErrorEntry, OPERATOR } from './error-entry.ts';

export const SETUP_CODES = {
  'config.not_found': { kind: 'operator', what: 'The ceremony is not configured on this server.', next: OPERATOR },
  'config.invalid': { kind: 'operator', what: 'The ceremony’s configuration is invalid.', next: OPERATOR },
  /** A native module (better-sqlite3) built for another Node, or unloadable: `npm rebuild` with the Node that runs. */
  'runtime.native_module_mismatch': {
    kind: 'operator',
    what: 'This installation’s native modules were built for another version of Node.',
    next: 'Run `npm rebuild` in the project folder with the Node that runs the command.',
  },
  'circuit.unknown': {
    kind: 'caller',
    what: 'This ceremony has no circuit of that name.',
    next: 'Reload the page: the list of circuits may have changed.',
    nextInTerminal: 'Check the circuit names (the ceremony lists them at /api/ceremony) and run the command again.',
  },
  'r1cs.malformed': { kind: 'operator', what: 'A circuit file on the server is damaged.', next: OPERATOR },
  'circuit.public_inputs_mismatch': {
    kind: 'operator',
    what: 'A circuit does not match the ceremony’s configuration.',
    next: OPERATOR,
  },
  'ptau.malformed': { kind: 'operator', what: 'The powers-of-tau file on the server is damaged.', next: OPERATOR },
  'ptau.not_prepared': {
    kind: 'operator',
    what: 'The powers-of-tau file is not prepared for Phase 2.',
    next: OPERATOR,
  },
  'ptau.too_small': { kind: 'operator', what: 'The powers-of-tau file is too small for a circuit.', next: OPERATOR },
  'ptau.insecure': { kind: 'operator', what: 'The powers-of-tau file is a development one.', next: OPERATOR },
  /** An r1cs whose BLAKE2b-512 is not the one ceremony.json (or the auditor) pins for its circuit. */
  'r1cs.hash_mismatch': {
    kind: 'operator',
    what: 'A circuit file is not the one the ceremony’s configuration pins.',
    next: OPERATOR,
  },
  /** A ptau whose BLAKE2b-512 is not the one ceremony.json pins (`ptauHash`): `init`, and `fetch` by the auditor's. */
  'ptau.hash_mismatch': {
    kind: 'operator',
    what: 'The powers-of-tau file is not the one the ceremony’s configuration pins.',
    next: 'Use the pinned file, or check where this one comes from.',
  },
  /**
   * `audit`, `fetch`: the publication's ceremony.json (or the ceremony a coordinator serves) differs from the
   * auditor's own (their checkout's, or --config) in a field the audit relies on; the message names the first.
   */
  'config.publication_mismatch': {
    kind: 'refusal',
    what: 'The ceremony you check is configured otherwise than your own copy of its ceremony.json says.',
    next: 'Check that your checkout is this ceremony’s; if it is, report the difference the message names publicly.',
  },
} satisfies Record<string, ErrorEntry>;
