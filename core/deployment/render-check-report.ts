/**
 * Renders a check report as the service document prints it: one `NAME match` or `NAME MISMATCH`
 * line per verifier (or, for a weaker check asked for explicitly, its own word: `NAME
 * constants-present`) on stdout, after the state the code was read at (`chain C, block N 0xHASH`)
 * when any was; reasons, warnings and what a match proved on stderr, a shared failure only once,
 * and last what the verdicts rest on: the endpoint's word.
 */
import { describeChainHead } from './deployed-code-reader.ts';
import { allVerifiersMatch, type CheckReport } from './verifier-check.ts';

export interface RenderedCheckReport {
  stdout: string;
  stderr: string;
  /** 0 when every verifier matched, 1 otherwise. */
  exitCode: 0 | 1;
}

/** What no verdict on deployed code can rule out, said wherever code was read. */
export const ENDPOINT_TRUSTED_NOTE =
  'note: the verdicts are on the code the RPC endpoint reported at that block; its answers are trusted, not ' +
  'checked (a lying node or a fork with code set would pass): use your own node, or check again through an ' +
  'independent provider';

export function renderCheckReport(report: CheckReport): RenderedCheckReport {
  const out: string[] = [];
  const err: string[] = (report.warnings ?? []).map((warning) => `warning: ${warning}`);
  if (report.chain !== undefined) out.push(describeChainHead(report.chain));
  if (report.secondChain !== undefined) out.push(`second network: ${describeChainHead(report.secondChain)}`);
  if (report.failure !== undefined) err.push(`error: ${report.failure}`);
  for (const check of report.verifiers) {
    out.push(`${check.verifier} ${check.match ? (check.weaker ?? 'match') : 'MISMATCH'}`);
    for (const reason of check.reasons) err.push(`${check.verifier}: ${reason}`);
    for (const warning of check.warnings) err.push(`warning: ${check.verifier}: ${warning}`);
    if (check.match) for (const proven of check.checked ?? []) err.push(`${check.verifier}: proven: ${proven}`);
    if (check.match && check.notProved !== undefined) err.push(`${check.verifier}: NOT proven: ${check.notProved}`);
  }
  if (report.chain !== undefined) err.push(ENDPOINT_TRUSTED_NOTE);
  return {
    stdout: out.map((line) => `${line}\n`).join(''),
    stderr: err.map((line) => `${line}\n`).join(''),
    exitCode: allVerifiersMatch(report) ? 0 : 1,
  };
}
