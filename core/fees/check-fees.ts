/**
 * The fee check of the service document: each published fee against its live source, i.e.
 * `withdrawFeeBps()` of every pool, the relayer's `GET /quote` and `GET /gas/quote`. All reads
 * run at once, each bounded by the timeout, and each fails only its own claim, so a dead RPC
 * endpoint or relayer never hides the other results.
 */
import type { FeeSchedule } from './fee-schedule.ts';
import { relayerEndpoint, type FeePoolTarget, type FeeTargets } from './fee-targets.ts';
import { fetchRelayerJson } from './fetch-relayer-json.ts';
import { formatUnits } from './exact-amount.ts';
import { parseGasQuote, USDC_DECIMALS, type GasQuote } from './parse-gas-quote.ts';
import { parseRelayQuote } from './parse-relay-quote.ts';
import { readWithdrawFee } from './read-withdraw-fee.ts';

export interface FeeClaim {
  /** How the live value was read, e.g. `pool Network A withdrawFeeBps()`, `relayer /quote`. */
  name: string;
  /** The published value with its unit. */
  published: string;
  /** The live value with its unit and how it was sent; absent when it could not be read. */
  live?: string;
  match: boolean;
  /**
   * True where the document makes the live source the current fee (the relayer's answers): a
   * MISMATCH then means the published schedule is out of date.
   */
  liveIsCurrent: boolean;
  /** Why the live value could not be read; empty otherwise. */
  reasons: string[];
}

export interface FeeReport {
  /** Pools in TARGETS order, then `/quote`, then the two fields of `/gas/quote`. */
  claims: FeeClaim[];
}

export interface CheckFeesOptions {
  targets: FeeTargets;
  schedule: FeeSchedule;
  /** Bound of each request (RPC call or relayer GET). Default 5000 ms. */
  timeoutMs?: number;
}

export const DEFAULT_FEE_TIMEOUT_MS = 5_000;

const WEI_DECIMALS = 18;

export async function checkFees(options: CheckFeesOptions): Promise<FeeReport> {
  const { targets, schedule } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_FEE_TIMEOUT_MS;
  const [pools, quote, gasQuote] = await Promise.all([
    Promise.all(targets.pools.map((pool) => checkPool(pool, schedule.poolWithdrawFeeBps, timeoutMs))),
    checkRelayQuote(relayerEndpoint(targets.relayer, '/quote'), schedule.relayFeeUsdcBaseUnits, timeoutMs),
    checkGasQuote(relayerEndpoint(targets.relayer, '/gas/quote'), schedule, timeoutMs),
  ]);
  return { claims: [...pools, quote, ...gasQuote] };
}

async function checkPool(pool: FeePoolTarget, published: bigint, timeoutMs: number): Promise<FeeClaim> {
  const claim = newClaim(`pool ${pool.name} withdrawFeeBps()`, `${published} bps`, false);
  const fee = await readWithdrawFee(pool.rpcUrl, pool.address, timeoutMs);
  if (!fee.ok) return { ...claim, reasons: [fee.reason] };
  return { ...claim, live: `${fee.bps} bps`, match: fee.bps === published };
}

async function checkRelayQuote(url: string, published: bigint, timeoutMs: number): Promise<FeeClaim> {
  const claim = newClaim('relayer /quote', usdc(published), true);
  const answer = await fetchRelayerJson(url, timeoutMs);
  if (!answer.ok) return { ...claim, reasons: [answer.reason] };
  const quote = parseRelayQuote(answer.body);
  if (!quote.ok) return { ...claim, reasons: [`GET ${url}: ${quote.reason}`] };
  const shape = quote.field === undefined ? `sent as ${typeof answer.body}` : `field ${JSON.stringify(quote.field)}`;
  return { ...claim, live: `${usdc(quote.baseUnits)}, ${shape}`, match: quote.baseUnits === published };
}

async function checkGasQuote(url: string, schedule: FeeSchedule, timeoutMs: number): Promise<FeeClaim[]> {
  const fee = newClaim('relayer /gas/quote feeUsdc', usdc(schedule.gasPurchaseFeeUsdcBaseUnits), true);
  const drop = newClaim('relayer /gas/quote dropWei', wei(schedule.gasPurchaseDropWei), true);
  const answer = await fetchRelayerJson(url, timeoutMs);
  if (!answer.ok)
    return [
      { ...fee, reasons: [answer.reason] },
      { ...drop, reasons: [answer.reason] },
    ];
  const quote: GasQuote = parseGasQuote(answer.body);
  return [
    quote.feeUsdc.ok
      ? {
          ...fee,
          live: `${usdc(quote.feeUsdc.baseUnits)}, sent as ${quote.feeUsdc.sentAs} ${quote.feeUsdc.sent}`,
          match: quote.feeUsdc.baseUnits === schedule.gasPurchaseFeeUsdcBaseUnits,
        }
      : { ...fee, reasons: [`GET ${url}: ${quote.feeUsdc.reason}`] },
    quote.dropWei.ok
      ? { ...drop, live: wei(quote.dropWei.wei), match: quote.dropWei.wei === schedule.gasPurchaseDropWei }
      : { ...drop, reasons: [`GET ${url}: ${quote.dropWei.reason}`] },
  ];
}

function newClaim(name: string, published: string, liveIsCurrent: boolean): FeeClaim {
  return { name, published, match: false, liveIsCurrent, reasons: [] };
}

function usdc(baseUnits: bigint): string {
  return `${baseUnits} base units (${formatUnits(baseUnits, USDC_DECIMALS)} USDC)`;
}

function wei(amount: bigint): string {
  return `${amount} wei (${formatUnits(amount, WEI_DECIMALS)} gas token)`;
}
