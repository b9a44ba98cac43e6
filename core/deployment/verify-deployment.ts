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
 *
 * That is all it proves: a contract with the right δ and other IC points, α, β or γ matches. The
 * whole final key, and the code itself, are what `--ceremony` checks
 * (verify-deployment-against-ceremony.ts); the CLI says so on stderr after this check.
 */
import type { Address } from 'viem';
import type { DeltaEntry } from '../manifest/delta-manifest.ts';
import { BN254_G2_GENERATOR_X, deltaIsG2Generator } from './delta-is-g2-generator.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage } from '../manifest/delta-equals-gamma.ts';
import {
  ownEntry,
  readDeployedCodes,
  requireHttpUrl,
  type DeployedCodes,
  type ReadCodeOptions,
} from './deployed-code-reader.ts';
import { parseDeltaEntry } from './parse-delta-entry.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';
import type { CheckReport, VerifierCheck } from './verifier-check.ts';

export interface VerifyDeploymentOptions extends ReadCodeOptions {
  /** JSON-RPC endpoint (http or https) of the network being checked. */
  rpcUrl: string;
  /** Verifier name → `{ deltax1, deltax2 }`; entries are validated one by one. */
  manifest: UncheckedManifest;
  /** Verifier name → deployed address on that network. */
  verifiers: UncheckedVerifierAddresses;
  /** Receives the code read, so a later check (`--compare`) reads no contract twice. */
  onCodes?: (codes: DeployedCodes) => void;
}

export async function verifyDeployment(options: VerifyDeploymentOptions): Promise<CheckReport> {
  const rpcUrl = requireHttpUrl(options.rpcUrl);
  const names = Object.keys(options.manifest);
  const addresses = new Map(names.map((verifier) => [verifier, ownEntry(options.verifiers, verifier)]));
  // Fetched even for a broken entry, so the output also says whether a contract is there.
  const read = await readDeployedCodes(rpcUrl, addresses, options);
  options.onCodes?.(read);

  const verifiers = names.map((verifier): VerifierCheck => {
    const check: VerifierCheck = { verifier, match: false, reasons: [], warnings: [] };
    const delta = parseDelta(check, options.manifest[verifier]);
    const code = read.codes.get(verifier);
    if (code?.ok === false && code.kind === 'address') check.reasons.push(code.reason);
    else if (read.failure === undefined && code !== undefined) {
      if (!code.ok) check.reasons.push(code.reason);
      else if (delta !== undefined) compareDelta(check, code.address, code.code.toLowerCase(), delta);
    }
    check.match = check.reasons.length === 0 && read.failure === undefined && code?.ok === true;
    return check;
  });
  return {
    ...(read.failure === undefined ? {} : { failure: read.failure }),
    ...(read.chain === undefined ? {} : { chain: read.chain }),
    verifiers,
  };
}

/** The δ = γ refusal of one verifier, with its code, naming its circuit. */
function deltaEqualsGammaReason(verifier: string, where: string): string {
  return `[${DELTA_EQUALS_GAMMA}] ${deltaEqualsGammaMessage(circuitOfVerifier(verifier) ?? verifier, verifier, where)}`;
}

function parseDelta(check: VerifierCheck, entry: unknown): DeltaEntry | undefined {
  const parsed = parseDeltaEntry(entry);
  if (!parsed.ok) {
    check.reasons.push(...parsed.reasons);
    return undefined;
  }
  if (deltaIsG2Generator(parsed.delta)) {
    const where = "the manifest's entry (the G2 generator, γ of every key snarkjs makes, so it matches any verifier)";
    check.reasons.push(deltaEqualsGammaReason(check.verifier, where));
  }
  return parsed.delta;
}

function compareDelta(check: VerifierCheck, address: Address, bytecode: string, delta: DeltaEntry): void {
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
