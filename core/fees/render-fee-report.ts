/**
 * Renders a fee report in the style of the deployment check: on stdout one line per claim (its
 * name, the live value, the published value, then `match` or `MISMATCH`), in aligned columns;
 * on stderr why a live value could not be read.
 */
import type { FeeReport } from './check-fees.ts';

export interface RenderedFeeReport {
  stdout: string;
  stderr: string;
  /** 0 when every claim matched, 1 otherwise (a value that differs or cannot be read). */
  exitCode: 0 | 1;
}

const UNREADABLE = 'unreadable';
export const OUT_OF_DATE_MARK = "(schedule out of date: the relayer's answer is the current fee)";

export function renderFeeReport(report: FeeReport): RenderedFeeReport {
  const nameWidth = Math.max(0, ...report.claims.map((claim) => claim.name.length));
  const liveWidth = Math.max(0, ...report.claims.map((claim) => (claim.live ?? UNREADABLE).length));
  const publishedWidth = Math.max(0, ...report.claims.map((claim) => claim.published.length));
  const out: string[] = [];
  const err: string[] = [];
  for (const claim of report.claims) {
    let verdict = claim.match ? 'match' : 'MISMATCH';
    if (!claim.match && claim.live !== undefined && claim.liveIsCurrent) verdict += ` ${OUT_OF_DATE_MARK}`;
    out.push(
      `${claim.name.padEnd(nameWidth)}  live ` +
        `${(claim.live ?? UNREADABLE).padEnd(liveWidth)}  published ` +
        `${claim.published.padEnd(publishedWidth)}  ${verdict}`,
    );
    for (const reason of claim.reasons) err.push(`${claim.name}: ${reason}`);
  }
  const allMatch = report.claims.length > 0 && report.claims.every((claim) => claim.match);
  return {
    stdout: out.map((line) => `${line}\n`).join(''),
    stderr: err.map((line) => `${line}\n`).join(''),
    exitCode: allMatch ? 0 : 1,
  };
}
