/**
 * The deployment check of the service document ("Verifier contracts"): for each verifier of the
 * manifest, read the deployed bytecode and require both delta x coordinates, in hex without
 * leading zeros, to occur in it. The compiler stores a constant padded to 32 bytes or, with the
 * optimizer, without its leading zero bytes; the unpadded hex string is a substring of both.
 *
 * Every verifier gets its own result; an RPC endpoint that cannot be reached at all is reported
 * once. All network calls have bounded timeouts, so the check never hangs.
 *
 * δ must not be γ (`vkey.delta_equals_gamma`: a key without Phase 2, every proof forgeable). Every
 * verifier snarkjs exports carries γ = the G2 generator beside δ, so two things are refused: a
 * manifest entry whose δ is the generator (it would "match" any verifier), and deployed code in
 * which δ's constants occur twice and the generator's not at all, which is what a verifier whose γ
 * was set to its δ compiles to (solc keeps one copy of each constant per use). Code without the
 * generator is refused in any case: its γ is not the one of any key the ceremony made.
 */
import { createPublicClient, http, isAddress, type Address, type PublicClient } from 'viem';
import { CoordinatorError } from '../errors.ts';
import { describeRpcError } from './describe-rpc-error.ts';
import type { DeltaEntry } from '../manifest/delta-manifest.ts';
import { BN254_G2_GENERATOR_X, deltaIsG2Generator } from './delta-is-g2-generator.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage } from '../manifest/delta-equals-gamma.ts';
import { parseDeltaEntry } from './parse-delta-entry.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';
import type { CheckReport, VerifierCheck } from './verifier-check.ts';

export interface VerifyDeploymentOptions {
  /** JSON-RPC endpoint (http or https) of the network being checked. */
  rpcUrl: string;
  /** Verifier name → `{ deltax1, deltax2 }`; entries are validated one by one. */
  manifest: UncheckedManifest;
  /** Verifier name → deployed address on that network. */
  verifiers: UncheckedVerifierAddresses;
  /** Timeout of the eth_chainId reachability probe, no retry. Default 5000 ms. */
  probeTimeoutMs?: number;
  /** Timeout of each eth_getCode request, retried once. Default 15000 ms. */
  requestTimeoutMs?: number;
}

const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

interface PendingCheck {
  check: VerifierCheck;
  delta?: DeltaEntry;
  address?: Address;
}

export async function verifyDeployment(options: VerifyDeploymentOptions): Promise<CheckReport> {
  const rpcUrl = requireHttpUrl(options.rpcUrl);
  const pending = Object.entries(options.manifest).map(([verifier, entry]) =>
    // Own properties only: a name like `constructor` must not find Object.prototype's.
    prepareCheck(verifier, entry, Object.hasOwn(options.verifiers, verifier) ? options.verifiers[verifier] : undefined),
  );

  const needCode = pending.filter((p) => p.address !== undefined);
  let failure: string | undefined;
  if (needCode.length > 0) {
    failure = await probeEndpoint(rpcUrl, options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
  }
  if (failure === undefined && needCode.length > 0) {
    const client = createPublicClient({
      transport: http(rpcUrl, { timeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, retryCount: 1 }),
    });
    // Concurrent: a manifest lists a handful of verifiers, and this bounds the total time by one
    // request's timeout instead of their sum.
    await Promise.all(needCode.map((p) => compareBytecode(client, p)));
  }

  for (const p of pending) {
    p.check.match = p.check.reasons.length === 0 && failure === undefined && p.address !== undefined;
  }
  return { ...(failure === undefined ? {} : { failure }), verifiers: pending.map((p) => p.check) };
}

/** The δ = γ refusal of one verifier, with its code, naming its circuit. */
function deltaEqualsGammaReason(verifier: string, where: string): string {
  return `[${DELTA_EQUALS_GAMMA}] ${deltaEqualsGammaMessage(circuitOfVerifier(verifier) ?? verifier, verifier, where)}`;
}

/** A malformed endpoint is a usage error (exit 2), not a network being down. */
function requireHttpUrl(rpcUrl: string): string {
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

function prepareCheck(verifier: string, entry: unknown, address: unknown): PendingCheck {
  const check: VerifierCheck = { verifier, match: false, reasons: [], warnings: [] };
  const pending: PendingCheck = { check };

  const parsed = parseDeltaEntry(entry);
  if (parsed.ok) {
    pending.delta = parsed.delta;
    if (deltaIsG2Generator(parsed.delta)) {
      const where = "the manifest's entry (the G2 generator, γ of every key snarkjs makes, so it matches any verifier)";
      check.reasons.push(deltaEqualsGammaReason(verifier, where));
    }
  } else {
    check.reasons.push(...parsed.reasons);
  }

  if (address === undefined) {
    check.reasons.push('no address in the verifiers file');
  } else if (typeof address !== 'string' || !isAddress(address)) {
    check.reasons.push(
      `address ${JSON.stringify(address)} is not a valid address (0x + 40 hex digits, EIP-55 checksum if mixed case)`,
    );
  } else {
    // Fetched even when the entry is broken, so the output also says whether a contract is there.
    pending.address = address;
  }
  return pending;
}

/** Returns why the endpoint cannot be used, or undefined when it answered eth_chainId. */
async function probeEndpoint(rpcUrl: string, timeoutMs: number): Promise<string | undefined> {
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

async function compareBytecode(client: PublicClient, pending: PendingCheck): Promise<void> {
  const { check, address, delta } = pending;
  if (address === undefined) return;
  let code: string | undefined;
  try {
    code = await client.getCode({ address, blockTag: 'latest' });
  } catch (error) {
    check.reasons.push(`eth_getCode at ${address} failed: ${describeRpcError(error)}`);
    return;
  }
  if (code === undefined || code === '0x') {
    check.reasons.push(`no contract code at ${address}`);
    return;
  }
  if (delta === undefined) return;
  const bytecode = code.toLowerCase();
  const occurrences = (hex: string): number => bytecode.split(hex).length - 1;
  const deltaCounts: number[] = [];
  for (const field of ['deltax1', 'deltax2'] as const) {
    const hex = BigInt(delta[field]).toString(16);
    deltaCounts.push(occurrences(hex));
    if (!bytecode.includes(hex)) check.reasons.push(`${field} (0x${hex}) does not occur in the bytecode at ${address}`);
  }
  // γ = the G2 generator: gammax1 is its x's c1, gammax2 its c0 (the manifest's convention for δ).
  const generator = [BN254_G2_GENERATOR_X[1], BN254_G2_GENERATOR_X[0]].map((c) => BigInt(c).toString(16));
  if (generator.some((hex) => !bytecode.includes(hex))) {
    if (!deltaIsG2Generator(delta) && deltaCounts.every((n) => n >= 2)) {
      const where = `the verifier deployed at ${address} (δ's constants stand where γ's should)`;
      check.reasons.push(deltaEqualsGammaReason(check.verifier, where));
    }
    check.reasons.push(
      `the G2 generator, γ of every verifier snarkjs exports, does not occur in the bytecode at ${address}: ` +
        "its γ is not the ceremony's",
    );
  }
}
