/**
 * `ceremony verify-deployment`: deployed verifier contracts against the delta manifest (the
 * service's δ-only procedure, unchanged, saying on stderr that only δ was checked), or with
 * `--ceremony DIR` against the final keys of the ceremony: each code must be the verifier of its
 * final key recompiled offline, byte for byte (core/deployment/check-deployed-verifiers.ts), or it is
 * a MISMATCH; `--constants-only` asks for less and says so. `--compare` adds a second network.
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
import { helpExamples, helpNotes } from './command-help.ts';
import { auditorConfigOption, valuesOption } from './shared-options.ts';
import {
  compilerSettingsOption,
  constantsOnlyOption,
  readCompilerSettings,
  requireOneCodeMode,
} from './verifier-code-options.ts';

const DELTA_ONLY_NOTE =
  'note: only δ was checked (deltax1 and deltax2 occur in the bytecode, the service document’s procedure); ' +
  'α, β, γ, the IC points and the code around them were not: add --ceremony DIR to check the whole final keys';

interface VerifyDeploymentFlags {
  ceremony?: string;
  config: string;
  compare?: string[];
  constantsOnly?: boolean;
  compilerSettings?: string;
  chainId?: number;
  compareChainId?: number;
  allowTestCeremony?: boolean;
}

export function verifyDeploymentCommand(): Command {
  return new Command('verify-deployment')
    .description(
      'check deployed verifier contracts: δ against the manifest, or (--ceremony) that each is the verifier of ' +
        'its final key, recompiled and compared byte for byte',
    )
    .argument('<rpc-url>', 'JSON-RPC endpoint (http or https) of the network to check')
    .argument('<manifest.json>', 'delta manifest: verifier name → { "deltax1", "deltax2" } (decimal strings)')
    .argument('<verifiers.json>', 'verifier name → deployed contract address on that network')
    .option(
      '--ceremony <dir>',
      'the published ceremony folder: check the manifest against the final keys, and each code against the ' +
        'verifier of its final key compiled offline as final/compiler.json (committed in the transcript) says',
    )
    .addOption(
      auditorConfigOption("with --ceremony: the folder's must agree with it; its circuits and verifiers are used"),
    )
    .addOption(compilerSettingsOption())
    .addOption(constantsOnlyOption())
    .addOption(
      valuesOption(
        '--compare <rpc2> <verifiers2>',
        'also require the same runtime code on a second network (metadata trailer aside)',
      ),
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
      helpNotes(
        '\nPrints "NAME match" or "NAME MISMATCH" per verifier; reasons go to stderr. Without --ceremony only δ\n' +
          "is checked, as the service's document defines it (stderr says so); with --ceremony the first line is\n" +
          "the ceremony's identifier (the hash of its transcript's last entry) and a match means the code is the\n" +
          'verifier of the final key, compiled and compared byte for byte (metadata trailer aside): code that\n' +
          'could not be compared is a MISMATCH [deployment.not_recompiled]. With --constants-only the verdict is\n' +
          '"NAME constants-present" and stderr says what it did not prove.\n' +
          'Every code is read at one block, printed before the verdicts ("chain C, block N 0xHASH");\n' +
          "the endpoint's answers are trusted: use your own node or a second, independent provider.\n" +
          'Exit status: 0 every verifier matches, 1 any MISMATCH (or a refusal), 2 usage or input file error.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        [
          'each contract on Ethereum is the verifier of its final key, recompiled and compared byte for byte',
          'ceremony verify-deployment https://eth.example manifest.json verifiers.json \\\n' +
            '--ceremony mirror --chain-id 1',
        ],
        [
          'and the same code on a second network',
          'ceremony verify-deployment https://eth.example manifest.json verifiers.json \\\n' +
            '--ceremony mirror --compare https://l2.example verifiers-l2.json',
        ],
        [
          'contracts compiled with other settings than the ceremony recorded (the deployer tells you which)',
          'ceremony verify-deployment https://eth.example manifest.json verifiers.json \\\n' +
            '--ceremony mirror --compiler-settings deployer-settings.json',
        ],
      ),
    )
    .action(runVerifyDeployment);
}

/** The options that mean nothing without another one. */
function requireCompanions(flags: VerifyDeploymentFlags): void {
  const alone = (what: string, needs: string) => {
    throw new CoordinatorError('usage.invalid_arguments', `${what} goes with ${needs}`);
  };
  if (flags.ceremony === undefined && flags.constantsOnly) alone('--constants-only', '--ceremony DIR');
  if (flags.ceremony === undefined && flags.compilerSettings !== undefined)
    alone('--compiler-settings', '--ceremony DIR');
  requireOneCodeMode(flags);
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

/** The check the command asked for (δ only, or against the ceremony's recompiled verifiers), its verdicts printed. */
async function runVerifyDeployment(
  rpcUrl: string,
  manifestPath: string,
  verifiersPath: string,
  flags: VerifyDeploymentFlags,
): Promise<void> {
  requireCompanions(flags);
  const compilerSettings = await readCompilerSettings(flags.compilerSettings);
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
      auditorConfig: flags.config,
      constantsOnly: flags.constantsOnly === true,
      ...(compilerSettings === undefined ? {} : { compilerSettings }),
      allowTestCeremony: flags.allowTestCeremony === true,
      onCodes,
      ...chainId,
    });
    process.stdout.write(`ceremony identifier: ${checked.identifier}\n`);
    if (checked.notRecompiled !== undefined) {
      notes.push(
        `note: no verifier could be compared with its recompiled code (${checked.notRecompiled}), so none ` +
          'matches: give the settings the contracts were compiled with (--compiler-settings JSON)',
      );
    }
    report = checked;
  }
  if (second !== undefined) report = await compareWithSecondNetwork(report, codes, second);
  const rendered = renderCheckReport(report);
  process.stdout.write(rendered.stdout);
  process.stderr.write(rendered.stderr + notes.map((note) => `${note}\n`).join(''));
  process.exitCode = rendered.exitCode;
}
