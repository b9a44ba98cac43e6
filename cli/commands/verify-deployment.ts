/**
 * `ceremony verify-deployment`: deployed verifier contracts against the delta manifest (the
 * service's δ-only procedure, unchanged, saying on stderr that only δ was checked), or with
 * `--ceremony DIR` against the whole final verification keys of the ceremony (and, where
 * final/compiler.json allows, the recompiled verifiers); `--compare` adds a second network.
 * Every code is read at one block, named on stdout (`chain C, block N 0xHASH`); `--chain-id`
 * and `--compare-chain-id` refuse an endpoint of another chain (`deployment.wrong_chain`).
 */
import { Command } from 'commander';
import { CoordinatorError } from '../../core/errors.ts';
import { compareWithSecondNetwork, type SecondNetwork } from '../../core/deployment/compare-networks.ts';
import { parseChainId, requireHttpUrl, type DeployedCodes } from '../../core/deployment/deployed-code-reader.ts';
import { readManifestFile } from '../../core/deployment/read-manifest-file.ts';
import { readVerifiersFile } from '../../core/deployment/read-verifiers-file.ts';
import { renderCheckReport } from '../../core/deployment/render-check-report.ts';
import { verifyDeployment } from '../../core/deployment/verify-deployment.ts';
import { verifyDeploymentAgainstCeremony } from '../../core/deployment/verify-deployment-against-ceremony.ts';
import type { CheckReport } from '../../core/deployment/verifier-check.ts';

const DELTA_ONLY_NOTE =
  'note: only δ was checked (deltax1 and deltax2 occur in the bytecode, the service document’s procedure); ' +
  'α, β, γ, the IC points and the code around them were not: add --ceremony DIR to check the whole final keys';

interface VerifyDeploymentFlags {
  ceremony?: string;
  compare?: string[];
  recompile: boolean;
  chainId?: number;
  compareChainId?: number;
  allowTestCeremony?: boolean;
}

export function verifyDeploymentCommand(): Command {
  return new Command('verify-deployment')
    .description(
      'check deployed verifier contracts: δ against the manifest, or (--ceremony) every constant of the final ' +
        'keys and the recompiled verifiers',
    )
    .argument('<rpc-url>', 'JSON-RPC endpoint (http or https) of the network to check')
    .argument('<manifest.json>', 'delta manifest: verifier name → { "deltax1", "deltax2" } (decimal strings)')
    .argument('<verifiers.json>', 'verifier name → deployed contract address on that network')
    .option(
      '--ceremony <dir>',
      'the published ceremony folder: check every constant of each final key (α1, β2, γ2, δ2, IC), the manifest ' +
        'against the final keys, and the code against the recompiled verifier (final/compiler.json)',
    )
    .option('--no-recompile', 'with --ceremony: check the constants only, even where final/compiler.json allows more')
    .option(
      '--compare <rpc2-and-verifiers2...>',
      'RPC2 VERIFIERS2: also require the same runtime code on a second network (metadata trailer aside)',
    )
    .option('--chain-id <n>', 'refuse the endpoint unless it reports this chain id (1: Ethereum mainnet)', (value) =>
      parseChainId(value, '--chain-id'),
    )
    .option(
      '--compare-chain-id <n>',
      "with --compare: the chain id the second network's endpoint must report",
      (value) => parseChainId(value, '--compare-chain-id'),
    )
    .option(
      '--allow-test-ceremony',
      "with --ceremony: check a test-network ceremony's keys even against a mainnet's verifiers (still warned)",
    )
    .addHelpText(
      'after',
      '\nPrints "NAME match" or "NAME MISMATCH" per verifier; reasons go to stderr. Without --ceremony only δ\n' +
        "is checked, as the service's document defines it (stderr says so); with --ceremony the first line is\n" +
        "the ceremony's identifier (the hash of its transcript's last entry) and each match says on stderr what\n" +
        'it proved. Every code is read at one block, printed before the verdicts ("chain C, block N 0xHASH");\n' +
        "the endpoint's answers are trusted: use your own node or a second, independent provider.\n" +
        'Exit status: 0 every verifier matches, 1 any MISMATCH (or a refusal), 2 usage or input file error.',
    )
    .action(async (rpcUrl: string, manifestPath: string, verifiersPath: string, flags: VerifyDeploymentFlags) => {
      requireCompanions(flags);
      const second = await secondNetwork(flags.compare, flags.compareChainId);
      const chainId = flags.chainId === undefined ? {} : { chainId: flags.chainId };
      const manifest = await readManifestFile(manifestPath);
      const verifiers = await readVerifiersFile(verifiersPath);
      let codes: DeployedCodes = { codes: new Map() };
      const onCodes = (read: DeployedCodes) => {
        codes = read;
      };
      let report: CheckReport;
      const notes: string[] = [];
      if (flags.ceremony === undefined) {
        report = await verifyDeployment({ rpcUrl, manifest, verifiers, onCodes, ...chainId });
        notes.push(DELTA_ONLY_NOTE);
      } else {
        const checked = await verifyDeploymentAgainstCeremony({
          rpcUrl,
          manifest,
          verifiers,
          ceremonyDir: flags.ceremony,
          recompile: flags.recompile,
          allowTestCeremony: flags.allowTestCeremony === true,
          onCodes,
          ...chainId,
        });
        process.stdout.write(`ceremony identifier: ${checked.identifier}\n`);
        if (checked.notRecompiled !== undefined) {
          notes.push(
            `note: no verifier was recompiled (${checked.notRecompiled}); of the code, only the constants were checked`,
          );
        }
        report = checked;
      }
      if (second !== undefined) report = await compareWithSecondNetwork(report, codes, second);
      const rendered = renderCheckReport(report);
      process.stdout.write(rendered.stdout);
      process.stderr.write(rendered.stderr + notes.map((note) => `${note}\n`).join(''));
      process.exitCode = rendered.exitCode;
    });
}

/** The options that mean nothing without another one. */
function requireCompanions(flags: VerifyDeploymentFlags): void {
  const alone = (what: string, needs: string) => {
    throw new CoordinatorError('usage.invalid_arguments', `${what} goes with ${needs}`);
  };
  if (flags.ceremony === undefined && !flags.recompile) alone('--no-recompile', '--ceremony DIR');
  if (flags.ceremony === undefined && flags.allowTestCeremony) alone('--allow-test-ceremony', '--ceremony DIR');
  if (flags.compare === undefined && flags.compareChainId !== undefined) alone('--compare-chain-id', '--compare');
}

async function secondNetwork(
  compare: string[] | undefined,
  chainId: number | undefined,
): Promise<SecondNetwork | undefined> {
  if (compare === undefined) return undefined;
  if (compare.length !== 2) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--compare takes two values, the second network's RPC URL and its verifiers file; got ${compare.length}`,
    );
  }
  const [rpcUrl, verifiersPath] = compare as [string, string];
  return {
    rpcUrl: requireHttpUrl(rpcUrl),
    verifiers: await readVerifiersFile(verifiersPath),
    ...(chainId === undefined ? {} : { chainId }),
  };
}
