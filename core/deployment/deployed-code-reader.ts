/**
 * Reading the runtime code of deployed contracts over JSON-RPC, shared by every deployment check:
 * the endpoint is probed once (eth_chainId, no retry) so a network that cannot be reached is one
 * failure rather than one per contract; then one block is read (its number and hash) and every
 * `eth_getCode` runs at that block number, concurrently, with a bounded timeout and one retry, so
 * every verdict is about one state of one chain, which the report names. A missing or malformed
 * address, a failed request or an address without code fails only its own contract, with a
 * one-line reason.
 *
 * The endpoint's answers are trusted: nothing here can tell a node that lies (or an anvil fork
 * whose code was set) from the chain. What is read is "the code this endpoint reports for chain C
 * at block N"; `chainId` at least refuses an endpoint of another chain (`deployment.wrong_chain`).
 */
import type { Address, Hex } from 'viem';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { describeRpcError } from './describe-rpc-error.ts';
import { isEvmAddress } from './evm-address.ts';
import { loadViem } from './viem-on-demand.ts';

export interface RpcTimeouts {
  /** Timeout of the eth_chainId reachability probe, no retry. Default 5000 ms. */
  probeTimeoutMs?: number;
  /** Timeout of the block's and of each eth_getCode request, retried once. Default 15000 ms. */
  requestTimeoutMs?: number;
}

/** The one state every contract's code was read at, as the endpoint reports it. */
export interface ChainHead {
  chainId: number;
  /** A number, not viem's bigint, so a report holding it is plain JSON (2^53 blocks is far off). */
  blockNumber: number;
  blockHash: Hex;
}

export interface ReadCodeOptions extends RpcTimeouts {
  /** The chain the endpoint must report (eth_chainId), else `deployment.wrong_chain`. */
  chainId?: number;
  /** Read at this block rather than the endpoint's latest, so several reads share one state. */
  at?: ChainHead;
  /**
   * Read at this block when the endpoint reports its chain (another endpoint of the same chain,
   * compared with the first): both then speak of one state, and their block hashes must agree.
   */
  sameStateAs?: ChainHead;
}

/** How a report names the state it read: `chain 1, block 19000000 0x…`. */
export function describeChainHead(head: ChainHead): string {
  return `chain ${head.chainId}, block ${head.blockNumber} ${head.blockHash}`;
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

/** A chain id given on the command line (`option` names it in the error): a positive integer, as EIP-155 has them. */
export function parseChainId(text: string, option: string): number {
  const id = Number(text);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(id)) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `${option} takes a chain id (a positive integer), got "${text}"`,
    );
  }
  return id;
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

/** The endpoint's chain id, or why the endpoint cannot be used. */
async function probeEndpoint(
  rpcUrl: string,
  timeoutMs: number,
): Promise<{ chainId: number; failure?: undefined } | { failure: string }> {
  const { createPublicClient, http } = await loadViem();
  const probe = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  try {
    return { chainId: await probe.getChainId() };
  } catch (error) {
    return {
      failure:
        `RPC endpoint ${rpcUrl} cannot be reached (eth_chainId, ${timeoutMs} ms timeout): ` + describeRpcError(error),
    };
  }
}

/** Refuses an endpoint of another chain than the one asked for, or than the block to read at. */
function requireChain(rpcUrl: string, chainId: number, options: ReadCodeOptions): void {
  for (const expected of [options.chainId, options.at?.chainId]) {
    if (expected !== undefined && chainId !== expected) {
      throw new CoordinatorError(
        'deployment.wrong_chain',
        `RPC endpoint ${rpcUrl} reports chain ${chainId}, not chain ${expected}: nothing was checked`,
      );
    }
  }
}

export interface DeployedCodes {
  /** Set when the endpoint could not be reached: no contract's code was read. */
  failure?: string;
  /** The state every code was read at; absent when no code was read. */
  chain?: ChainHead;
  /** For every name that had a valid address (and the endpoint answered). */
  codes: Map<string, DeployedCode>;
}

/**
 * Reads the runtime code at each valid address of `addresses` (name → address, validated first:
 * an invalid one is in `codes` with kind `address` and costs no request), all at one block. The
 * endpoint is contacted only when at least one address is valid. Throws `deployment.wrong_chain`
 * for an endpoint of another chain than `options.chainId` (or `options.at`'s).
 */
export async function readDeployedCodes(
  rpcUrl: string,
  addresses: ReadonlyMap<string, unknown>,
  options: ReadCodeOptions = {},
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
  const probeTimeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const probed = await probeEndpoint(requireHttpUrl(rpcUrl), probeTimeoutMs);
  if (probed.failure !== undefined) return { failure: probed.failure, codes };
  requireChain(rpcUrl, probed.chainId, options);
  const { createPublicClient, http } = await loadViem();
  const client = createPublicClient({
    transport: http(rpcUrl, { timeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, retryCount: 1 }),
  });
  const sameState = options.sameStateAs?.chainId === probed.chainId ? options.sameStateAs : undefined;
  const head = options.at ?? sameState ?? (await latestBlock(client, rpcUrl, probed.chainId));
  if (typeof head === 'string') return { failure: head, codes };
  // Concurrent: a manifest lists a handful of verifiers, and this bounds the total time by one
  // request's timeout instead of their sum.
  await Promise.all(
    [...valid].map(async ([name, address]) => {
      codes.set(name, await readCode(client, address, BigInt(head.blockNumber)));
    }),
  );
  // Code is read by block number (eth_getCode takes no hash here): the number must still name the
  // block the report names, on this endpoint, after the reads.
  const moved = await blockMoved(client, rpcUrl, head);
  if (moved !== undefined) {
    // As when the endpoint cannot be reached: only the addresses refused before any request stay.
    return { failure: moved, codes: new Map([...codes].filter(([, code]) => !code.ok && code.kind === 'address')) };
  }
  return { chain: head, codes };
}

/** Why block `head.blockNumber` is not `head.blockHash` on this endpoint, or undefined when it is. */
async function blockMoved(client: Client, rpcUrl: string, head: ChainHead): Promise<string | undefined> {
  try {
    const block = await client.getBlock({ blockNumber: BigInt(head.blockNumber) });
    if (block.hash === head.blockHash) return undefined;
    return (
      `RPC endpoint ${rpcUrl} has block ${head.blockNumber} as ${block.hash ?? 'no hash'}, not ${head.blockHash}: ` +
      'the chain reorganised while the code was read, or two endpoints disagree; nothing was checked, run it again'
    );
  } catch (error) {
    const why = describeRpcError(error);
    return `RPC endpoint ${rpcUrl} gave no block ${head.blockNumber} (eth_getBlockByNumber): ${why}`;
  }
}

type Client = ReturnType<Awaited<ReturnType<typeof loadViem>>['createPublicClient']>;

/** The endpoint's latest block (number and hash), or why it gave none. */
async function latestBlock(client: Client, rpcUrl: string, chainId: number): Promise<ChainHead | string> {
  try {
    const block = await client.getBlock({ blockTag: 'latest' });
    if (block.number === null || block.hash === null) throw new Error('the block has no number or hash');
    return { chainId, blockNumber: Number(block.number), blockHash: block.hash };
  } catch (error) {
    return `RPC endpoint ${rpcUrl} gave no latest block (eth_getBlockByNumber): ${describeRpcError(error)}`;
  }
}

async function readCode(client: Client, address: Address, blockNumber: bigint): Promise<DeployedCode> {
  let code: Hex | undefined;
  try {
    code = await client.getCode({ address, blockNumber });
  } catch (error) {
    return { ok: false, address, reason: `eth_getCode at ${address} failed: ${describeRpcError(error)}`, kind: 'rpc' };
  }
  if (code === undefined || code === '0x') {
    return { ok: false, address, reason: `no contract code at ${address}`, kind: 'no_code' };
  }
  return { ok: true, address, code };
}
