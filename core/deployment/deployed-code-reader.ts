/**
 * Reading the runtime code of deployed contracts over JSON-RPC, shared by every deployment check:
 * the endpoint is probed once (eth_chainId, no retry) so a network that cannot be reached is one
 * failure rather than one per contract, then every `eth_getCode` runs concurrently with a bounded
 * timeout and one retry. A missing or malformed address, a failed request or an address without
 * code fails only its own contract, with a one-line reason.
 */
import type { Address, Hex } from 'viem';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { describeRpcError } from './describe-rpc-error.ts';
import { isEvmAddress } from './evm-address.ts';
import { loadViem } from './viem-on-demand.ts';

export interface RpcTimeouts {
  /** Timeout of the eth_chainId reachability probe, no retry. Default 5000 ms. */
  probeTimeoutMs?: number;
  /** Timeout of each eth_getCode request, retried once. Default 15000 ms. */
  requestTimeoutMs?: number;
}

const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** What became of one contract's code: its bytes, or why there are none. */
export type DeployedCode =
  | { ok: true; address: Address; code: Hex }
  | { ok: false; address?: Address; reason: string; kind: 'address' | 'rpc' | 'no_code' };

/** The code of each way a contract's code was not read, for the checks that give every verdict a code. */
export const UNREAD_CODE_ERRORS: Readonly<Record<Extract<DeployedCode, { ok: false }>['kind'], ErrorCode>> = {
  address: 'input.invalid',
  rpc: 'deployment.rpc_unavailable',
  no_code: 'deployment.no_contract',
};

/** A malformed endpoint is a usage error (exit 2), not a network being down. */
export function requireHttpUrl(rpcUrl: string): string {
  let url: URL;
  try {
    url = new URL(rpcUrl);
  } catch {
    throw new CoordinatorError('usage.invalid_arguments', `RPC URL ${JSON.stringify(rpcUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CoordinatorError('usage.invalid_arguments', `RPC URL ${rpcUrl} must be http:// or https://`);
  }
  return rpcUrl;
}

/** The address of a verifiers file's entry, or why it is not one; `file` names the file in the reason. */
function parseVerifierAddress(
  address: unknown,
  file = 'the verifiers file',
): { ok: true; address: Address } | { ok: false; reason: string } {
  if (address === undefined) return { ok: false, reason: `no address in ${file}` };
  if (typeof address !== 'string' || !isEvmAddress(address)) {
    return {
      ok: false,
      reason:
        `address ${JSON.stringify(address)} is not a valid address ` +
        '(0x + 40 hex digits, EIP-55 checksum if mixed case)',
    };
  }
  return { ok: true, address };
}

/** The entry of `name` in a verifiers file, own properties only (`constructor` must not find Object.prototype's). */
export function ownEntry(record: Readonly<Record<string, unknown>>, name: string): unknown {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** Returns why the endpoint cannot be used, or undefined when it answered eth_chainId. */
async function probeEndpoint(rpcUrl: string, timeoutMs: number): Promise<string | undefined> {
  const { createPublicClient, http } = await loadViem();
  const probe = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  try {
    await probe.getChainId();
    return undefined;
  } catch (error) {
    return (
      `RPC endpoint ${rpcUrl} cannot be reached (eth_chainId, ${timeoutMs} ` + `ms timeout): ${describeRpcError(error)}`
    );
  }
}

export interface DeployedCodes {
  /** Set when the endpoint could not be reached: no contract's code was read. */
  failure?: string;
  /** For every name that had a valid address (and the endpoint answered). */
  codes: Map<string, DeployedCode>;
}

/**
 * Reads the runtime code at each valid address of `addresses` (name → address, validated first:
 * an invalid one is in `codes` with kind `address` and costs no request). The endpoint is
 * contacted only when at least one address is valid.
 */
export async function readDeployedCodes(
  rpcUrl: string,
  addresses: ReadonlyMap<string, unknown>,
  timeouts: RpcTimeouts = {},
  file?: string,
): Promise<DeployedCodes> {
  const codes = new Map<string, DeployedCode>();
  const valid = new Map<string, Address>();
  for (const [name, entry] of addresses) {
    const parsed = parseVerifierAddress(entry, file);
    if (parsed.ok) valid.set(name, parsed.address);
    else codes.set(name, { ok: false, reason: parsed.reason, kind: 'address' });
  }
  if (valid.size === 0) return { codes };
  const probeTimeoutMs = timeouts.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const failure = await probeEndpoint(requireHttpUrl(rpcUrl), probeTimeoutMs);
  if (failure !== undefined) return { failure, codes };
  const { createPublicClient, http } = await loadViem();
  const client = createPublicClient({
    transport: http(rpcUrl, { timeout: timeouts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, retryCount: 1 }),
  });
  // Concurrent: a manifest lists a handful of verifiers, and this bounds the total time by one
  // request's timeout instead of their sum.
  await Promise.all(
    [...valid].map(async ([name, address]) => {
      let code: Hex | undefined;
      try {
        code = await client.getCode({ address, blockTag: 'latest' });
      } catch (error) {
        codes.set(name, {
          ok: false,
          address,
          reason: `eth_getCode at ${address} failed: ${describeRpcError(error)}`,
          kind: 'rpc',
        });
        return;
      }
      if (code === undefined || code === '0x') {
        codes.set(name, { ok: false, address, reason: `no contract code at ${address}`, kind: 'no_code' });
      } else {
        codes.set(name, { ok: true, address, code });
      }
    }),
  );
  return { codes };
}
