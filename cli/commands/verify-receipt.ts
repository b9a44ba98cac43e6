/**
 * `ceremony verify-receipt RECEIPTS.json DIR | --coordinator URL`: checks that each signed receipt
 * is the coordinator's, recorded in the public transcript, and included in the final key of its
 * circuit (before finalisation: the chain's head), that every later record proves its secret and
 * carries δ on to the key's, and that the key's fixed sections are contribution 0's, from a
 * published folder offline or from a coordinator over HTTP with range requests. The checks are
 * core/receipts/receipt-checker.ts, the same the public page runs. One line per receipt on stdout
 * (or JSON with --json), then what was proven, what rests on the audit and the ceremony's
 * identifier; progress on stderr. Exit: 0 every receipt included, 1 any not (or a bad signature),
 * 2 usage. A transcript with format-1 entries is refused unless --allow-legacy-transcript, and any
 * but the one --identifier names ends the command (core/transcript/legacy-transcript.ts,
 * ceremony-identifier.ts).
 *
 * Each receipt goes through `checkReceipt` (one kind of receipt today), and the checker takes
 * further per-circuit checks through `extraKeyChecks`: `--deployment RPC VERIFIERS` adds the deployed
 * verifier of each receipt's circuit against the final key read (core/deployment/deployed-verifier-key-check.ts):
 * the code must be that key's verifier, recompiled and compared byte for byte, every one read at one
 * block, which the output names (`deployment` in the JSON).
 */
import { readFile, stat } from 'node:fs/promises';
import { Command } from 'commander';
import { CoordinatorError } from '../../core/errors.ts';
import { coordinatorEvidence } from '../../core/receipts/coordinator-evidence.ts';
import { folderEvidence } from '../../core/receipts/folder-evidence.ts';
import {
  ReceiptChecker,
  receiptSubject,
  type ExtraKeyCheck,
  type ReceiptVerdict,
} from '../../core/receipts/receipt-checker.ts';
import type { PublicTranscript } from '../../core/receipts/public-transcript.ts';
import {
  MAX_RECEIPTS_FILE_BYTES,
  parseReceiptsText,
  type ReceiptsFile,
  type SignedReceipt,
} from '../../core/receipts/receipts-file.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples, helpNotes } from './command-help.ts';
import { auditorConfigOption, valuesOption } from './shared-options.ts';
import { checkStepReceiptsOfText } from '../../core/receipts/step-receipt-evidence.ts';
import type { StepReceiptVerdict } from '../../core/receipts/step-receipt.ts';
import { stepReceiptSubject } from '../../core/receipts/step-receipt.ts';
import {
  deployedVerifierKeyCheck,
  evidenceCompiler,
  type DeployedVerifierKeyCheck,
} from '../../core/deployment/deployed-verifier-key-check.ts';
import { auditorCompiler, type VerifierCompiler } from '../../core/deployment/recompile-verifiers.ts';
import {
  compilerSettingsOption,
  constantsOnlyOption,
  readCompilerSettings,
  requireOneCodeMode,
} from './verifier-code-options.ts';
import { describeChainHead, parseChainId, type ChainHead } from '../../core/deployment/deployed-code-reader.ts';
import { readVerifiersFile } from '../../core/deployment/read-verifiers-file.ts';
import { testCeremonyWarning } from '../../core/deployment/ceremony-final-keys.ts';
import { parseIdentifier } from '../../core/transcript/ceremony-identifier.ts';
import { readAuditorConfig, refuseOtherConfig } from '../../core/audit/auditor-config.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import type { ReceiptEvidence } from '../../core/receipts/receipt-checker.ts';

interface VerifyReceiptOptions {
  coordinator?: string;
  deployment?: string[];
  constantsOnly?: boolean;
  compilerSettings?: string;
  chainId?: number;
  config: string;
  identifier?: string;
  allowLegacyTranscript?: boolean;
  json?: boolean;
  quiet?: boolean;
}

/** The receipts file's text, read once (the step receipts and the acceptance receipts are both in it). */
async function readReceiptsText(file: string): Promise<string> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw new CoordinatorError(
      error.code === 'ENOENT' ? 'input.file_not_found' : 'input.invalid',
      `cannot read the receipts file ${file}: ${error.code ?? error.message}`,
    );
  });
  if (!info.isFile()) throw new CoordinatorError('input.invalid', `${file} is not a file`);
  if (info.size > MAX_RECEIPTS_FILE_BYTES)
    throw new CoordinatorError('input.invalid', `${file} is ${info.size} bytes; a receipts file is far smaller`);
  return readFile(file, 'utf8');
}

function parseReceiptsFile(file: string, text: string): ReceiptsFile {
  try {
    return parseReceiptsText(text);
  } catch (error) {
    if (error instanceof CoordinatorError) throw new CoordinatorError(error.code, `${file}: ${error.message}`);
    throw error;
  }
}

function coordinatorUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CoordinatorError('usage.invalid_arguments', `--coordinator must be a URL (http or https), got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CoordinatorError('usage.invalid_arguments', `--coordinator must be an http or https URL, got "${raw}"`);
  return url.href.replace(/\/+$/, '');
}

function verdictJson(verdict: ReceiptVerdict): Record<string, unknown> {
  const { body } = verdict.receipt;
  const common = {
    circuit: body.circuit,
    index: body.index,
    contributor: body.contributor,
    contributionHash: body.contributionHash,
    ok: verdict.ok,
  };
  return verdict.ok
    ? {
        ...common,
        key: verdict.key,
        keyIndex: verdict.keyIndex,
        message: verdict.message,
        proven: verdict.proven,
        restsOnAudit: verdict.restsOnAudit,
        ...(verdict.unproven ? { unproven: verdict.unproven } : {}),
      }
    : { ...common, code: verdict.code, message: verdict.message };
}

/** One receipt's verdict: the one place a kind of receipt is dispatched to its check. */
function checkReceipt(checker: ReceiptChecker, receipt: SignedReceipt, file: ReceiptsFile): Promise<ReceiptVerdict> {
  return checker.check(receipt, file);
}

/** The deployment's check, when asked: the one check each circuit's key goes through besides the checker's own. */
async function deploymentCheck(
  options: VerifyReceiptOptions,
  compiler: () => Promise<VerifierCompiler>,
): Promise<DeployedVerifierKeyCheck | undefined> {
  const { deployment, chainId } = options;
  if (deployment === undefined) {
    for (const [given, name] of [
      [chainId !== undefined, '--chain-id'],
      [options.constantsOnly === true, '--constants-only'],
      [options.compilerSettings !== undefined, '--compiler-settings'],
    ] as const)
      if (given) throw new CoordinatorError('usage.invalid_arguments', `${name} goes with --deployment`);
    return undefined;
  }
  if (deployment.length !== 2) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--deployment takes two values, the JSON-RPC URL and the verifiers file (got ${deployment.length})`,
    );
  }
  requireOneCodeMode(options);
  const settings = await readCompilerSettings(options.compilerSettings);
  const [rpcUrl, verifiersPath] = deployment as [string, string];
  const expected = chainId === undefined ? {} : { chainId };
  const mode =
    options.constantsOnly === true
      ? { constantsOnly: true as const }
      : { compiler: settings === undefined ? compiler : async () => auditorCompiler(settings) };
  return deployedVerifierKeyCheck(rpcUrl, await readVerifiersFile(verifiersPath), mode, expected);
}

/** The text form: each receipt's verdict, the totals, the identifier, the deployment's block, each queue step's. */
function writeTextReport(report: {
  verdicts: ReceiptVerdict[];
  steps: StepReceiptVerdict[];
  transcript: PublicTranscript | undefined;
  chain: ChainHead | undefined;
  testCeremony: string | undefined;
  identifierGiven: boolean;
}): void {
  const { verdicts, steps, transcript, chain, testCeremony, identifierGiven } = report;
  if (testCeremony !== undefined)
    process.stderr.write(
      `warning: ${testCeremonyWarning(testCeremony)}; a deployed verifier that carries them guards nothing\n`,
    );
  for (const verdict of verdicts) {
    const subject = receiptSubject(verdict.receipt);
    process.stdout.write(
      verdict.ok ? `${subject} ok: ${verdict.message}\n` : `${subject} FAIL [${verdict.code}]: ${verdict.message}\n`,
    );
  }
  const count = `${verdicts.length} receipt${verdicts.length === 1 ? '' : 's'}`;
  const notPassed = verdicts.filter((v) => !v.ok).length;
  if (verdicts.length > 0 || steps.length === 0)
    process.stdout.write(
      notPassed === 0 ? `all ${count} included\n` : `verify-receipt FAILED: ${notPassed} of ${count} did not pass\n`,
    );
  for (const line of closingLines(verdicts, transcript, identifierGiven)) process.stdout.write(`${line}\n`);
  if (chain !== undefined) {
    process.stdout.write(
      `deployment read at ${describeChainHead(chain)}, as the endpoint reports it (trusted, not checked)\n`,
    );
  }
  for (const v of steps)
    process.stdout.write(`${stepReceiptSubject(v.receipt)} ${v.ok ? 'ok:' : `FAIL [${v.code}]:`} ${v.message}\n`);
  const stepsFailed = steps.filter((v) => !v.ok).length;
  const stepCount = `${steps.length} queue step${steps.length === 1 ? '' : 's'}`;
  if (steps.length > 0)
    process.stdout.write(
      stepsFailed === 0
        ? `all ${stepCount} recorded in the queue log\n`
        : `verify-receipt FAILED: ${stepsFailed} of ${stepCount} not in the queue log\n`,
    );
}

/** What the passing verdicts proved (each phrase once), what they leave to the audit, and the identifier. */
function closingLines(
  verdicts: ReceiptVerdict[],
  transcript: PublicTranscript | undefined,
  identifierGiven: boolean,
): string[] {
  const passed = verdicts.filter((v): v is Extract<ReceiptVerdict, { ok: true }> => v.ok);
  const lines: string[] = [];
  if (passed.length > 0) {
    const proven = [...new Set(passed.flatMap((v) => v.proven))];
    const rests = [...new Set(passed.flatMap((v) => v.restsOnAudit))];
    lines.push(`proven for ${passed.length === 1 ? 'the receipt' : 'each receipt'} included:`);
    lines.push(...proven.map((phrase) => `  - ${phrase}`));
    lines.push('left to the audit (`ceremony audit DIR`, once, by anyone):');
    lines.push(...rests.map((phrase) => `  - ${phrase}`));
    const unproven = [...new Set(passed.flatMap((v) => v.unproven ?? []))];
    if (unproven.length > 0) {
      lines.push('NOT proven (a legacy transcript, read with --allow-legacy-transcript):');
      lines.push(...unproven.map((phrase) => `  - ${phrase}`));
    }
  }
  const id = transcript?.identifier;
  if (id)
    lines.push(
      `ceremony identifier: ${id.hash} (the hash of transcript entry ${id.seq}, its last: ${id.type})` +
        (identifierGiven ? ', the one given with --identifier' : ''),
    );
  return lines;
}

/**
 * With --deployment: the auditor's own ceremony.json (`configFile`), which the publication at `dir`
 * must agree with (the coordinator's, with --coordinator, must be its ceremony), and why the ceremony
 * is a test network's, on its word or the source's (its ptau's marker, or what it says). A test
 * network's keys guard nothing, so a deployed verifier that carries them must not read as more; the
 * source's word alone let a coordinator pass a test network off as the real one.
 */
async function testNetworkOfYourCeremony(
  configFile: string,
  dir: string | undefined,
  evidence: ReceiptEvidence,
): Promise<string | undefined> {
  const yours = (await readAuditorConfig(configFile, dir ?? process.cwd())).config;
  if (dir !== undefined) {
    refuseOtherConfig(yours, await loadCeremonyConfig(dir), "the publication's ceremony.json", configFile);
  } else {
    const served = await evidence.ceremonyId();
    if (served !== yours.id)
      throw new CoordinatorError(
        'config.publication_mismatch',
        `the coordinator serves ceremony ${JSON.stringify(served.slice(0, 136))}, not your ceremony.json's ` +
          `${yours.id} (${configFile})`,
      );
  }
  // The source can only add to your word (a development ptau where yours names none), never take it away.
  if (yours.testNetwork) return 'your ceremony.json says "testNetwork": true';
  return evidence.testNetwork?.();
}

/** The run: each receipt of RECEIPTS.json checked against DIR or --coordinator and reported; exit 1 if any failed. */
async function verifyReceipts(receiptsPath: string, dir: string | undefined, options: VerifyReceiptOptions) {
  if ((dir === undefined) === (options.coordinator === undefined)) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      'give either a published folder DIR or --coordinator URL (one of them)',
    );
  }
  // Usage and input errors of --deployment before anything is read.
  let checker: ReceiptChecker | undefined;
  const deployment = await deploymentCheck(options, () =>
    evidenceCompiler(evidence, () => checker!.publicTranscript()),
  );
  const extraChecks: ExtraKeyCheck[] = deployment === undefined ? [] : [deployment];
  const evidence =
    options.coordinator !== undefined
      ? coordinatorEvidence({ baseUrl: coordinatorUrl(options.coordinator) })
      : await folderEvidence(dir!); // one of the two is given: checked above
  // Before any receipt is checked: a verdict on a deployed contract is about the auditor's ceremony.
  const testCeremony =
    deployment === undefined ? undefined : await testNetworkOfYourCeremony(options.config, dir, evidence);
  // Step receipts (join, refusal, removal) are checked against the queue log (step-receipt.ts).
  const source = options.coordinator !== undefined ? { baseUrl: coordinatorUrl(options.coordinator) } : { dir: dir! };
  const text = await readReceiptsText(receiptsPath);
  const steps = await checkStepReceiptsOfText(text, evidence, source);
  const file: ReceiptsFile = steps.hasAcceptances ? parseReceiptsFile(receiptsPath, text) : { receipts: [] };
  const { results: verdicts, transcript } = await withStderrProgress(
    async (progress) => {
      checker = new ReceiptChecker(evidence, {
        onStep: (receipt, _step, detail) => progress({ type: 'step', circuit: receiptSubject(receipt), step: detail }),
        extraKeyChecks: extraChecks,
        allowLegacyTranscript: options.allowLegacyTranscript === true,
        ...(options.identifier === undefined ? {} : { identifier: options.identifier }),
      });
      // An identity compared out of band is the command's premise: any other transcript ends it.
      if (options.identifier !== undefined) await checker.publicTranscript();
      const results: ReceiptVerdict[] = [];
      for (const receipt of file.receipts) {
        progress({
          type: 'step',
          circuit: receiptSubject(receipt),
          step: `checking receipt ${receipt.position} of ${file.receipts.length} against ${evidence.label}`,
        });
        results.push(await checkReceipt(checker, receipt, file));
        progress({ type: 'finished', circuit: receiptSubject(receipt) });
      }
      return { results, transcript: await checker.hashChainedTranscript().catch(() => undefined) };
    },
    { quiet: options.quiet || options.json },
  );
  const identifier = transcript?.identifier;
  const failed = [...verdicts, ...steps.verdicts].filter((v) => !v.ok);
  const chain = deployment?.chain();
  const report = {
    ok: failed.length === 0,
    source: evidence.label,
    ...(identifier ? { identifier: { ...identifier, given: options.identifier !== undefined } } : {}),
    ...(chain === undefined
      ? {}
      : {
          deployment: {
            chainId: chain.chainId,
            blockNumber: chain.blockNumber,
            blockHash: chain.blockHash,
            endpointTrusted: true,
            ...(testCeremony === undefined ? {} : { testNetwork: testCeremony }),
          },
        }),
    receipts: verdicts.map(verdictJson),
    steps: steps.verdicts.map((v) => ({ ...JSON.parse(v.receipt.bodyText), ...v, receipt: undefined })),
  };
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    writeTextReport({
      verdicts,
      steps: steps.verdicts,
      transcript,
      chain,
      testCeremony,
      identifierGiven: options.identifier !== undefined,
    });
  }
  for (const verdict of verdicts) {
    if (!verdict.ok)
      process.stderr.write(`error [${verdict.code}]: ${receiptSubject(verdict.receipt)}: ${verdict.message}\n`);
  }
  for (const v of steps.verdicts)
    if (!v.ok) process.stderr.write(`error [${v.code}]: ${stepReceiptSubject(v.receipt)}: ${v.message}\n`);
  if (failed.length > 0) process.exitCode = 1;
}

export function verifyReceiptCommand(): Command {
  return new Command('verify-receipt')
    .description(
      'check that signed receipts are in the transcript and in the final keys, ' +
        'from a published folder or a coordinator',
    )
    .argument(
      '<receipts.json>',
      'one receipt, the list /api/me/receipts answers, or the receipts file the contribute page saves',
    )
    .argument('[dir]', 'published ceremony folder (`ceremony publish` output); or use --coordinator')
    .option(
      '--coordinator <url>',
      'check against a running coordinator over HTTP instead of a folder (range requests: a few kB of each key)',
    )
    .addOption(
      valuesOption(
        '--deployment <rpc> <verifiers>',
        'also check that the deployed verifier of each receipt’s circuit (VERIFIERS: name → address, as for ' +
          'verify-deployment) is the verifier of the final key the receipt is in, recompiled and compared byte ' +
          'for byte',
      ),
    )
    .option('--chain-id <n>', 'with --deployment: refuse the endpoint unless it reports this chain id', (value) =>
      parseChainId(value, '--chain-id'),
    )
    .addOption(compilerSettingsOption())
    .addOption(
      auditorConfigOption(
        'with --deployment, the publication (or the ceremony the coordinator serves) must be it, and whether ' +
          'the ceremony is a test network is its word',
      ),
    )
    .addOption(constantsOnlyOption())
    .option(
      '--identifier <hash>',
      'the ceremony identifier you compared with other readers (the hash of the transcript’s last entry, as ' +
        '`ceremony audit` prints it): any other transcript is refused (transcript.identifier_mismatch)',
      parseIdentifier,
    )
    .option(
      '--allow-legacy-transcript',
      'read a transcript with format-1 entries (whole-file hashes only) instead of refusing it; each verdict ' +
        'then says what stayed unproven',
    )
    .option('--json', 'print the verdicts as JSON on stdout')
    .option('--quiet', 'no progress lines on stderr')
    .addHelpText(
      'after',
      helpNotes(
        "\nFor each receipt: the signature against the coordinator's receipt key (DIR/receipt-public-key.pem,\n" +
          'or GET /api/receipt-key), the transcript entry at its position (hash chain recomputed), and the\n' +
          "final key's own contribution history (before finalisation: the chain's head), read by byte\n" +
          "ranges, checked against the transcript's section hashes and recomputed as snarkjs does, which\n" +
          "must list the contribution at its position; every later record's proof of knowledge and δ step\n" +
          "and e(δ1, g2) = e(g1, δ2) (pairings); the key's IC, α, β, γ and other fixed sections as\n" +
          "contribution 0's. Left to `ceremony audit`: that contribution 0 is the circuit's and the ptau's,\n" +
          "the key's L and H (its default check; your own key's, a key between, only with --every-link, and\n" +
          'no verdict rests on them), and the published files byte for byte. Prints the ceremony\n' +
          "identifier (the hash of the transcript's last entry). With --deployment RPC VERIFIERS, also\n" +
          "that the verifier deployed for each receipt's circuit is that final key's verifier: rendered from\n" +
          "the key, compiled offline as the ceremony's committed final/compiler.json says (or\n" +
          '--compiler-settings) and compared byte for byte, all read at one block it prints; code not compared\n' +
          "fails [deployment.not_recompiled]. The contract then pins the key's whole history, so a view of\n" +
          "the ceremony without your contribution cannot pass. The endpoint's answers are trusted (use your\n" +
          'own node).\n' +
          'A transcript with format-1 entries (whole-file hashes only) is refused unless\n' +
          '--allow-legacy-transcript; with --identifier HASH, any transcript but the one of that identifier\n' +
          'is refused.\n' +
          'Exit status: 0 every receipt passed, 1 any did not (or a bad signature), 2 usage or input error.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        ['your receipts against a published folder, offline', 'ceremony verify-receipt receipts.json mirror'],
        [
          'against the running coordinator',
          'ceremony verify-receipt receipts.json --coordinator https://ceremony.example',
        ],
        [
          "and the verifier deployed for each receipt's circuit",
          'ceremony verify-receipt receipts.json mirror \\\n' +
            '--deployment https://eth.example verifiers.json --chain-id 1',
        ],
      ),
    )
    .action(verifyReceipts);
}
