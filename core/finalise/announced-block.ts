/**
 * The chain a beacon announcement names, read over JSON-RPC: before the announcement, that its
 * block is still in the future; at finalisation and in the audit, that block's hash, which is the
 * beacon. The endpoint's answers are trusted (a node that lies about a block's hash cannot be told
 * from the chain), so every message says which endpoint's word a verdict rests on, by role, never
 * by URL: a coordinator's URL may carry an API key, and these messages can leave the server.
 */
import { CoordinatorError } from '../errors.ts';
import { requireHttpUrl } from '../deployment/deployed-code-reader.ts';
import { loadViem } from '../deployment/viem-on-demand.ts';

/** Where the beacon comes from: the hash of block `blockNumber` of EVM chain `chainId` (EIP-155). */
export interface BeaconBlock {
  chainId: number;
  blockNumber: number;
}

const REQUEST_TIMEOUT_MS = 15_000;

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

type Client = ReturnType<Awaited<ReturnType<typeof loadViem>>['createPublicClient']>;

/** A client of `rpcUrl` whose chain must be `chainId` (`beacon.wrong_chain` otherwise). */
async function clientOfChain(rpcUrl: string, chainId: number): Promise<Client> {
  const { createPublicClient, http } = await loadViem();
  const client = createPublicClient({
    transport: http(requireHttpUrl(rpcUrl), { timeout: REQUEST_TIMEOUT_MS, retryCount: 1 }),
  });
  const reported = await ask('eth_chainId', () => client.getChainId());
  if (reported !== chainId) {
    throw new CoordinatorError(
      'beacon.wrong_chain',
      `the RPC endpoint reports chain ${reported}, not chain ${chainId}, which the beacon announcement names`,
    );
  }
  return client;
}

/**
 * What kind of failure an RPC request met, in words of our own: viem's messages quote the
 * endpoint's URL (which may carry an API key) and the network's (host, port), and this message can
 * leave the server.
 */
function failureKind(error: unknown): string {
  const chain: unknown[] = [];
  for (let e = error; e instanceof Error && chain.length < 10; e = e.cause) chain.push(e);
  const text = chain.map((e) => `${(e as Error).name} ${(e as Error).message}`).join(' ');
  const status = chain.map((e) => (e as { status?: unknown }).status).find((s) => typeof s === 'number');
  const rpcCode = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === 'number');
  if (/Timeout|timed out/i.test(text)) return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  if (/ECONNREFUSED/.test(text)) return 'connection refused';
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return 'host not found';
  if (typeof status === 'number') return `HTTP status ${status}`;
  if (typeof rpcCode === 'number') return `JSON-RPC error ${rpcCode}`;
  return 'no usable answer';
}

async function ask<T>(method: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw new CoordinatorError(
      'beacon.rpc_unavailable',
      `the RPC endpoint gave no answer to ${method}: ${failureKind(error)}`,
    );
  }
}

/**
 * The endpoint's latest block number, refusing (`beacon.block_too_soon`) an announcement of a
 * block fewer than `minBlocksAhead` blocks ahead of it: once mined, its hash is known, and a block
 * just ahead may be mined before the announcement is seen.
 */
export async function requireFutureBlock(rpcUrl: string, block: BeaconBlock, minBlocksAhead: number): Promise<number> {
  const client = await clientOfChain(rpcUrl, block.chainId);
  const latest = Number(await ask('eth_blockNumber', () => client.getBlockNumber({ cacheTime: 0 })));
  if (block.blockNumber - latest < minBlocksAhead) {
    throw new CoordinatorError(
      'beacon.block_too_soon',
      `block ${block.blockNumber} of chain ${block.chainId} is ` +
        (block.blockNumber <= latest ? 'already mined' : `only ${plural(block.blockNumber - latest, 'block')} ahead`) +
        ` (the latest is ${latest}); announce a block at least ${minBlocksAhead} ahead, so no one knows its hash yet`,
    );
  }
  return latest;
}

/** The announced block as the endpoint reports it. */
export interface MinedBeaconBlock {
  /** Its hash, the beacon: lower-case hex, no 0x. */
  hash: string;
  /** Its timestamp, seconds since 1970 (the block producer's word). */
  timestamp: number;
}

/**
 * The announced block, once `confirmations` blocks are on top of it (a block that can still be
 * reorganised away is no beacon yet): `beacon.block_not_final` before that.
 */
export async function readBeaconBlock(
  rpcUrl: string,
  block: BeaconBlock,
  confirmations: number,
): Promise<MinedBeaconBlock> {
  const client = await clientOfChain(rpcUrl, block.chainId);
  const latest = Number(await ask('eth_blockNumber', () => client.getBlockNumber({ cacheTime: 0 })));
  const onTop = latest - block.blockNumber;
  if (onTop < confirmations) {
    throw new CoordinatorError(
      'beacon.block_not_final',
      `block ${block.blockNumber} of chain ${block.chainId} ` +
        (onTop < 0 ? `is not mined yet (the latest is ${latest})` : `has ${plural(onTop, 'block')} on top of it`) +
        `; the beacon is taken once ${confirmations} are, at block ${block.blockNumber + confirmations}`,
    );
  }
  const found = await ask('eth_getBlockByNumber', () => client.getBlock({ blockNumber: BigInt(block.blockNumber) }));
  if (found.hash === null || !/^0x[0-9a-fA-F]{64}$/.test(found.hash)) {
    throw new CoordinatorError(
      'beacon.rpc_unavailable',
      `the RPC endpoint gave block ${block.blockNumber} without a hash`,
    );
  }
  return { hash: found.hash.slice(2).toLowerCase(), timestamp: Number(found.timestamp) };
}
