/**
 * Reads a pool's live withdrawal fee: the read call `withdrawFeeBps()` (no arguments, uint256
 * basis points) of the service document. The code at the address is read first, so an empty
 * address is reported as such rather than as a call that returned nothing. Never throws: every
 * failure is a one-line reason for the pool's line of the report.
 */
import type { Address } from 'viem';
import { describeRpcError } from '../deployment/describe-rpc-error.ts';
import { loadViem, type Viem } from '../deployment/viem-on-demand.ts';

export type WithdrawFee = { ok: true; bps: bigint } | { ok: false; reason: string };

const WITHDRAW_FEE_ABI = [
  {
    type: 'function',
    name: 'withdrawFeeBps',
    inputs: [],
    outputs: [{ name: '', type: 'uint256' }],
    stateMutability: 'view',
  },
] as const;

export async function readWithdrawFee(rpcUrl: string, address: Address, timeoutMs: number): Promise<WithdrawFee> {
  const viem = await loadViem();
  const { createPublicClient, http } = viem;
  // No retry: the timeout is the auditor's bound on the whole check, and a retry would double it.
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  let code: string | undefined;
  try {
    code = await client.getCode({ address, blockTag: 'latest' });
  } catch (error) {
    return { ok: false, reason: `eth_getCode at ${address} on ${rpcUrl} failed: ${describeRpcError(error)}` };
  }
  if (code === undefined || code === '0x') return { ok: false, reason: `no contract code at ${address} on ${rpcUrl}` };
  try {
    const bps = await client.readContract({ address, abi: WITHDRAW_FEE_ABI, functionName: 'withdrawFeeBps' });
    return { ok: true, bps };
  } catch (error) {
    return { ok: false, reason: `withdrawFeeBps() at ${address} ${describeCallError(viem, error)}` };
  }
}

/** A revert keeps its reason (viem's first line stops just before it). */
function describeCallError({ BaseError, ContractFunctionRevertedError }: Viem, error: unknown): string {
  const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
  if (reverted instanceof ContractFunctionRevertedError) {
    if (reverted.signature) return `reverted with custom error ${reverted.signature}`;
    if (reverted.data && reverted.data.errorName !== 'Error' && reverted.data.errorName !== 'Panic')
      return `reverted with error ${reverted.data.errorName}`;
    // Without revert data viem passes on the node's message, which is only "execution reverted".
    if (reverted.reason && reverted.reason !== 'execution reverted') return `reverted: ${reverted.reason}`;
    // No data at all: most often a contract without this function (and without a fallback).
    return 'reverted without a reason (does the contract have withdrawFeeBps()?)';
  }
  return `failed: ${describeRpcError(error)}`;
}
