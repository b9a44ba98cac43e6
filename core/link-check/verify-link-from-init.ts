/**
 * Verification of one link from contribution 0: is a candidate zkey a valid next link on the head
 * of a circuit's chain, checked by snarkjs against the chain's first key and the ptau? Used by
 * `ceremony verify` and `acceptContribution` (extend-chain.ts), and by finalisation for the
 * beacon's final key. The coordinator and `ceremony contribute` use the incremental
 * verify-link-from-head.ts instead, which needs only the head.
 *
 * Two layers, cheapest first:
 *  1. Structure, against the head (check-link-structure.ts, streaming, each failure with its own code): a well-formed
 *     Groth16 key of the same circuit (header, IC, coefficients, A, B1, B2 byte-equal), whose MPC
 *     history is the head's plus exactly one new record of the expected kind, with a new delta
 *     that the header carries.
 *  2. Cryptography, against contribution 0 (snarkjs `zKey.verifyFromInit`): every proof of
 *     knowledge, delta in G1 and G2, and L and H consistent with the new delta. Checking against
 *     contribution 0 rather than the r1cs keeps the cost flat in chain length and never rebuilds
 *     the key from r1cs + ptau.
 */
import * as snarkjs from 'snarkjs';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { contributionHash } from '../zkey/contribution-hash.ts';
import { readZkeyInfo, type ZkeyInfo } from '../zkey/zkey-file.ts';
import { checkLinkStructure, type LinkExpectation } from './check-link-structure.ts';
import { snarkjsProgressLogger, type Progress } from '../ceremony/progress.ts';

export type { LinkExpectation } from './check-link-structure.ts';

export interface VerifyLinkFromInitInput {
  /** Contribution 0 of the chain, as `ceremony init` made it. */
  initZkeyPath: string;
  ptauPath: string;
  /** The current head (already verified). */
  headZkeyPath: string;
  candidatePath: string;
  expect?: LinkExpectation;
  /** How refusals name the head and the candidate (default: their paths); a server passes roles. */
  labels?: { head: string; candidate: string };
  /** Where snarkjs's counted progress goes, as work on `circuit` (the CLI renders it). */
  progress?: { to: Progress; circuit: string };
}

export interface VerifiedLink {
  /** Index of the candidate in the chain (the number of contributions it carries). */
  index: number;
  contributionHash: string;
  /** The name the contributor's client wrote into the record, if any. */
  recordedName: string | undefined;
  type: number;
  candidate: ZkeyInfo;
}

function refuse(code: ErrorCode, message: string): never {
  throw new CoordinatorError(code, message);
}

/** Maps the messages snarkjs logs on failure to our stable codes. */
function codeForSnarkjsFailure(errors: string[]): { code: ErrorCode; message: string } {
  const all = errors.join('; ');
  if (/L section/.test(all))
    return { code: 'contribution.l_section_invalid', message: 'the L section is not consistent with the new delta' };
  if (/H section/.test(all))
    return { code: 'contribution.h_section_invalid', message: 'the H section is not consistent with the new delta' };
  if (/delta/i.test(all))
    return {
      code: 'contribution.delta_mismatch',
      message: 'delta in G1 and G2 of the header do not match the contribution',
    };
  if (errors.length === 0) {
    // snarkjs reports proof-of-knowledge failures on the console only; the prefix check above
    // guarantees that every earlier record is the verified head's, so the new one is at fault.
    return {
      code: 'contribution.invalid_proof_of_knowledge',
      message: "the new contribution's proof of knowledge of its secret does not verify",
    };
  }
  return { code: 'contribution.invalid', message: `snarkjs refused the key: ${all}` };
}

export async function verifyLinkFromInit(input: VerifyLinkFromInitInput): Promise<VerifiedLink> {
  const expect = input.expect ?? { kind: 'random' };
  const candidate = await readZkeyInfo(input.candidatePath, input.labels?.candidate);
  const head = await readZkeyInfo(input.headZkeyPath, input.labels?.head);

  const record = await checkLinkStructure(head, candidate, expect);

  const errors: string[] = [];
  const logger = input.progress
    ? snarkjsProgressLogger(input.progress.to, input.progress.circuit, errors)
    : { debug: () => {}, info: () => {}, warn: () => {}, error: (message: string) => void errors.push(message) };
  let valid: boolean;
  try {
    valid = await snarkjs.zKey.verifyFromInit(input.initZkeyPath, input.ptauPath, input.candidatePath, logger);
  } catch (error) {
    // snarkjs names files by path in its messages: put the caller's labels in their place.
    let message = (error as Error).message;
    if (input.labels) {
      const roles: Array<[string, string]> = [
        [input.candidatePath, input.labels.candidate],
        [input.headZkeyPath, input.labels.head],
        [input.initZkeyPath, 'contribution 0'],
        [input.ptauPath, 'the ptau'],
      ];
      for (const [file, role] of roles) message = message.split(file).join(role);
    }
    throw new CoordinatorError('contribution.invalid', `the key could not be verified: ${message}`);
  }
  if (valid !== true) {
    const { code, message } = codeForSnarkjsFailure(errors);
    refuse(code, message);
  }

  const curve = await getBn128();
  return {
    index: candidate.mpc.contributions.length,
    contributionHash: contributionHash(curve, record),
    recordedName: record.name,
    type: record.type,
    candidate,
  };
}
