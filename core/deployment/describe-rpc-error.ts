/**
 * One line from a viem (or fetch) error, for reports that print a reason per checked item: viem's
 * own messages span many lines (URL, body, version), which would bury the report.
 */
import { viemIfLoaded } from './viem-on-demand.ts';

/**
 * Keeps the first line of viem's summary, the server's or transport's details, and a non-viem
 * root cause such as `connect ECONNREFUSED ...`.
 */
export function describeRpcError(error: unknown): string {
  const firstLine = (text: string) => text.split('\n')[0]!.trim().replace(/\.$/, '');
  const BaseError = viemIfLoaded()?.BaseError;
  if (!BaseError || !(error instanceof BaseError)) {
    return firstLine(error instanceof Error ? error.message : String(error));
  }
  let root: unknown = error;
  while (root instanceof Error && root.cause instanceof Error) root = root.cause;
  const parts = [firstLine(error.shortMessage), error.details ? firstLine(error.details) : undefined];
  if (root instanceof Error && !(root instanceof BaseError)) parts.push(firstLine(root.message));
  return parts.filter((part, i): part is string => !!part && parts.indexOf(part) === i).join(': ');
}
