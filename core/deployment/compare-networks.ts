/**
 * `--compare RPC2 VERIFIERS2`: each verifier's runtime code on a second network against its code on
 * the first (the service deploys the same contracts on both). What is compared is the code byte
 * for byte except the contents of solc's metadata trailer: a difference there alone (the same
 * source compiled under another path) is said, not refused, since the trailer is never executed.
 * A snarkjs verifier has no immutables (its runtime code is the same wherever it is deployed), so
 * there is nothing else to set aside; code that differs anywhere else is `deployment.networks_differ`.
 *
 * Two endpoints that report the same chain id are one network read twice: the second reads at the
 * first's block, which must have the same hash there, the report warns, and each match says it
 * compared two endpoints, not two networks (still worth having as a check of one provider against
 * another).
 */
import type { Hex } from 'viem';
import {
  ownEntry,
  readDeployedCodes,
  UNREAD_CODE_ERRORS,
  type ChainHead,
  type DeployedCodes,
  type RpcTimeouts,
} from './deployed-code-reader.ts';
import { executableCode, runtimeBytes } from './runtime-bytecode.ts';
import type { CheckReport } from './verifier-check.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';

export interface SecondNetwork {
  rpcUrl: string;
  /** Verifier name → address on the second network. */
  verifiers: UncheckedVerifierAddresses;
  /** The chain the second endpoint must report, else `deployment.wrong_chain`. */
  chainId?: number;
}

export type RuntimeCodeComparison =
  | { same: true; metadataDiffers: boolean }
  /** `lengths`: of the whole codes, trailers included. */
  | { same: false; firstDifferingByte: number; lengths: [number, number] };

/**
 * Compares two runtime codes byte for byte, except the contents of their metadata trailers, which
 * must still be as long: a longer "trailer" could hide code after the compared part (never
 * reached by it, but nothing here needs to argue that).
 */
export function compareRuntimeCode(first: Hex, second: Hex): RuntimeCodeComparison {
  const [a, b] = [runtimeBytes(first), runtimeBytes(second)];
  const [x, y] = [executableCode(a), executableCode(b)];
  if (x.equals(y) && a.length === b.length) return { same: true, metadataDiffers: !a.equals(b) };
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i += 1;
  return { same: false, firstDifferingByte: i, lengths: [a.length, b.length] };
}

/**
 * Adds the second network's verdict to `report` (whose verifiers' code on the first network is
 * `firstCodes`): a verifier matches only if it matched and its code there is the same. A second
 * endpoint that cannot be reached fails every verifier, reported once in `failure`.
 */
export async function compareWithSecondNetwork(
  report: CheckReport,
  firstCodes: DeployedCodes,
  second: SecondNetwork,
  timeouts: RpcTimeouts = {},
): Promise<CheckReport> {
  const names = report.verifiers.map((check) => check.verifier);
  const read = await readDeployedCodes(
    second.rpcUrl,
    new Map(names.map((name) => [name, ownEntry(second.verifiers, name)])),
    {
      ...timeouts,
      ...(second.chainId === undefined ? {} : { chainId: second.chainId }),
      // Another endpoint of the first's chain reads the first's block: one state, read twice.
      ...(firstCodes.chain ? { sameStateAs: firstCodes.chain } : {}),
    },
    'the second verifiers file',
  );
  const oneChain = sameChain(firstCodes.chain, read.chain);
  const there = oneChain === undefined ? 'on the second network' : `from the second endpoint (chain ${oneChain} too)`;
  for (const check of report.verifiers) {
    const theirs = read.codes.get(check.verifier);
    const here = firstCodes.codes.get(check.verifier);
    if (theirs === undefined) {
      check.match = false; // the second endpoint failed: said once, in `failure`
      continue;
    }
    if (!theirs.ok) {
      check.reasons.push(`[${UNREAD_CODE_ERRORS[theirs.kind]}] second network: ${theirs.reason}`);
      check.match = false;
      continue;
    }
    // Without the first network's code there is nothing to compare with; that is already a MISMATCH.
    if (here?.ok !== true) continue;
    const compared = compareRuntimeCode(here.code, theirs.code);
    if (!compared.same) {
      check.reasons.push(
        `[deployment.networks_differ] the runtime code at ${theirs.address} ${there} is not the code at ` +
          `${here.address} on the first: they differ from byte ${compared.firstDifferingByte} ` +
          `(${compared.lengths[0]} and ${compared.lengths[1]} bytes long)`,
      );
      check.match = false;
    } else if (check.match) {
      check.checked = [
        ...(check.checked ?? []),
        `the same runtime code at ${theirs.address} ${there}, byte for byte` +
          (compared.metadataDiffers ? " but for the metadata trailer's contents, which differ (never executed)" : ''),
      ];
    }
  }
  const failure = [report.failure, read.failure && `second network: ${read.failure}`].filter(Boolean).join('; ');
  const warnings = [...(report.warnings ?? [])];
  if (oneChain !== undefined) {
    warnings.push(
      `both endpoints report chain ${oneChain}: --compare read one network through two endpoints ` +
        '(at the same block, whose hash both give), not two networks',
    );
  }
  return {
    ...report,
    ...(failure === '' ? {} : { failure }),
    ...(read.chain === undefined ? {} : { secondChain: read.chain }),
    ...(warnings.length === 0 ? {} : { warnings }),
  };
}

/** The chain id both reads report, if they report one. */
function sameChain(first: ChainHead | undefined, second: ChainHead | undefined): number | undefined {
  return first !== undefined && second !== undefined && first.chainId === second.chainId ? first.chainId : undefined;
}
