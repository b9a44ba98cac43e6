/**
 * `ceremony audit DIR`: the audit of a published ceremony (core/audit/audit-ceremony.ts), its
 * findings one a line on stdout, then every r1cs's hash and every chain's contributions (so each
 * contributor can find theirs), or all of it as JSON with --json (the shape docs/audit.md
 * documents). Exit 0 when every finding passed, 1 otherwise, 2 for a usage error. An unfinished
 * ceremony fails (`audit.not_finalised`) unless --in-progress asks for an audit of a running one,
 * whose last line then says it is not finished. Each chain's final key is checked against
 * contribution 0 and its records, the keys between held to the transcript but their L and H not
 * checked (each circuit's finding says so); --every-link checks every key against the one before
 * it. --final-key, the default's name, is kept for the scripts that name it. The configuration is
 * the auditor's own (--config, default the checkout's ceremony-data/ceremony.json), never the
 * publication's; --identifier refuses any other transcript, --allow-legacy-transcript reads one
 * with format-1 entries and says what that left unproven.
 */
import { Command, Option } from 'commander';
import { auditCeremony, DEFAULT_MAX_BEACON_ITERATIONS_EXP, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { BEACON_ITERATIONS_EXP } from '../../core/transcript/transcript-format.ts';
import { parsePtauHash } from '../../core/audit/pin-ptau.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { requireHttpUrl } from '../../core/deployment/deployed-code-reader.ts';
import { DEFAULT_AUDITOR_CONFIG } from '../../core/audit/auditor-config.ts';
import { defaultPtauMemoDir } from '../../core/audit/verified-ptau-memo.ts';
import { defaultInitialKeyMemoDir } from '../../core/audit/verified-initial-key-memo.ts';
import { parseIdentifier } from '../../core/transcript/ceremony-identifier.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples, helpNotes } from './command-help.ts';

/**
 * The JSON output's format name and version: a contributor's tool may read it, so it only changes with a new version.
 */
export const AUDIT_JSON_FORMAT = 'ceremony-audit';
export const AUDIT_JSON_VERSION = 3;

function parseMinContributions(value: string): number {
  if (!/^[1-9]\d{0,5}$/.test(value)) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--min-contributions takes a whole number from 1, not "${value}"`,
    );
  }
  return Number(value);
}

function parseMaxBeaconIterations(value: string): number {
  const exp = /^\d{1,2}$/.test(value) ? Number(value) : NaN;
  if (!(exp >= BEACON_ITERATIONS_EXP.min && exp <= BEACON_ITERATIONS_EXP.max)) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--max-beacon-iterations takes the exponent N of 2^N, a whole number from ${BEACON_ITERATIONS_EXP.min} ` +
        `to ${BEACON_ITERATIONS_EXP.max}, not "${value}"`,
    );
  }
  return exp;
}

function collectR1csPin(value: string, pins: Record<string, string>): Record<string, string> {
  const at = value.indexOf('=');
  const name = at > 0 ? value.slice(0, at) : '';
  if (!name)
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--r1cs-hash takes CIRCUIT=HASH, got ${JSON.stringify(value)}`,
    );
  const hash = (() => {
    try {
      return parsePtauHash(value.slice(at + 1));
    } catch {
      throw new CoordinatorError(
        'usage.invalid_arguments',
        `--r1cs-hash ${name}=…: the hash must be a BLAKE2b-512 (128 hex digits, as \`b2sum FILE\` prints it)`,
      );
    }
  })();
  if (Object.hasOwn(pins, name) && pins[name] !== hash)
    throw new CoordinatorError('usage.invalid_arguments', `--r1cs-hash pins ${name} twice, with two hashes`);
  return { ...pins, [name]: hash };
}

/** The text form: findings, then the hashes an auditor compares, then the contributions of every chain. */
export function renderAuditReport(report: AuditReport): string {
  const lines = report.findings.map(
    (finding) => `${finding.subject} ${finding.ok ? 'ok' : 'FAIL'}: ${finding.summary}`,
  );
  if (report.ptau) {
    lines.push('', `ptau: ${report.ptau.path} BLAKE2b-512 ${report.ptau.blake2b512}`);
    if (report.ptau.sectionsChecked) for (const item of report.ptau.sectionsChecked) lines.push(`  checked: ${item}`);
    const remembered = report.ptau.sectionsRemembered;
    if (remembered)
      lines.push(
        `  (remembered: checked by this machine on ${remembered.checkedAt}, ` +
          `check version ${remembered.checkVersion}; --recheck-ptau checks again)`,
      );
  }
  const withHashes = report.circuits.filter((circuit) => circuit.r1cs.blake2b512 !== undefined);
  if (withHashes.length > 0) {
    lines.push('', 'r1cs (BLAKE2b-512):');
    for (const circuit of withHashes) {
      const pinned = circuit.r1cs.pinnedBy.length > 0 ? `  pinned by ${circuit.r1cs.pinnedBy.join(' and ')}` : '';
      lines.push(`  ${circuit.name} ${circuit.r1cs.path} ${circuit.r1cs.blake2b512}${pinned}`);
    }
  }
  const listed = report.circuits.filter((circuit) => circuit.contributions.length > 0 || circuit.final);
  if (listed.length > 0) {
    lines.push('', 'contributions (position, contributor, name in the key, contribution hash; * = not verified):');
    for (const circuit of listed) {
      lines.push(`  ${circuit.name}`);
      for (const c of circuit.contributions) {
        lines.push(
          `    #${c.index}${c.verified ? '' : '*'} ${c.contributor}` +
            `${c.name !== undefined ? ` "${c.name}"` : ''} ${c.contributionHash}`,
        );
      }
      if (circuit.final) {
        const f = circuit.final;
        lines.push(
          `    final${f.verified ? '' : '*'} beacon ${f.beacon} ` +
            `(2^${f.iterationsExp} iterations) ${f.contributionHash}`,
        );
      }
    }
    // Each final key is proved to apply the beacon the transcript states; where that came from is the beacon finding's.
    if (listed.some((circuit) => circuit.final))
      lines.push('  (each beacon as the transcript states it: the beacon finding above says whether it was announced)');
  }
  if (report.identifier) {
    const { hash, seq, type } = report.identifier;
    const given = report.identifier.given ? '; the one given with --identifier' : '';
    lines.push(
      '',
      `ceremony identifier: ${hash}`,
      `  (the hash of transcript entry ${seq}, its last: ${type}${given})`,
    );
  }
  const failures = report.findings.filter((f) => !f.ok).length;
  lines.push('', lastLine(report, failures));
  return `${lines.join('\n')}\n`;
}

/** The verdict: passed, failed, or passed so far for a running ceremony (which must say it is not finished). */
function lastLine(report: AuditReport, failures: number): string {
  const verdict = failures === 0 ? 'audit passed' : `audit FAILED: ${failures} problem${failures === 1 ? '' : 's'}`;
  const legacy = report.legacyTranscript
    ? `; LEGACY transcript, read with --allow-legacy-transcript: ${report.legacyTranscript.unproven}`
    : '';
  if (!report.inProgress) return `${verdict}${legacy}`;
  return `${verdict}; the ceremony is in progress, NOT finished: ${report.inProgress.missing.join('; ')}${legacy}`;
}

export function auditCommand(): Command {
  const command = new Command('audit')
    .description(
      're-verify a published ceremony folder from its files alone: ' +
        'the pinned ptau, each contribution 0, every final key against it, the transcript and the manifest',
    )
    .argument('<dir>', 'published ceremony folder (ceremony.json, circuits, ptau, chains, transcript, final)')
    .option(
      '--config <file>',
      "your own ceremony.json, never the coordinator's: the publication's must agree with it, and its r1cs and " +
        'ptau hashes are your pins',
      DEFAULT_AUDITOR_CONFIG,
    )
    .option(
      '--ptau <file>',
      'the powers of tau, for a publication made without it (checked against its ptau-source.json)',
    )
    .addOption(
      new Option(
        '--ptau-hash <blake2b512>',
        'pin the ptau: its BLAKE2b-512 as `b2sum` prints it ' +
          "(needed unless it is a known public ptau, e.g. Hermez's powersOfTau28_hez_final_NN)",
      ).argParser(parsePtauHash),
    )
    .addOption(
      new Option(
        '--r1cs-hash <circuit=blake2b512>',
        "pin a circuit's r1cs to the hash of the one you compiled yourself (repeatable)",
      )
        .argParser(collectR1csPin)
        .default({}, 'none'),
    )
    .addOption(
      new Option(
        '--min-contributions <n>',
        'fail any finalised chain with fewer contributions than this (ceremony.json sets its own; the higher holds)',
      ).argParser(parseMinContributions),
    )
    .addOption(
      new Option(
        '--max-beacon-iterations <n>',
        'derive a final beacon hashed up to 2^n times; a chain whose beacon needs more fails ' +
          '(audit.beacon_too_costly) rather than keeping the audit from a verdict',
      )
        .argParser(parseMaxBeaconIterations)
        .default(DEFAULT_MAX_BEACON_ITERATIONS_EXP),
    )
    .addOption(
      new Option(
        '--beacon-rpc <url>',
        "a JSON-RPC endpoint of the chain the beacon announcement names: each final key's beacon must be the " +
          "announced block's hash",
      ).argParser(requireHttpUrl),
    )
    .option(
      '--identifier <hash>',
      'the ceremony identifier you compared with others (the hash of the transcript’s last entry): any other ' +
        'transcript fails (transcript.identifier_mismatch)',
      parseIdentifier,
    )
    .option(
      '--allow-legacy-transcript',
      'read a transcript with format-1 entries (whole-file hashes only) instead of failing it; the verdict then ' +
        'says what stayed unproven',
    )
    .option(
      '--no-queue-log',
      "the ceremony had no queue log (made without the coordinator's lobby): a missing " +
        'transcript/queue-log.jsonl passes, the order of turns NOT checked (without it, audit.queue_log_missing)',
    )
    .option(
      '--in-progress',
      'audit a running ceremony: what it has so far must pass, and the last line says it is not finished ' +
        '(without it, an unfinished ceremony fails with audit.not_finalised)',
    )
    .addOption(
      new Option(
        '--final-key',
        "check each chain's last key against contribution 0 and its records (the default; says so explicitly): " +
          'proves the final key descends from every recorded contribution, NOT that the keys between are valid',
      ).conflicts('everyLink'),
    )
    .option(
      '--every-link',
      'check every key against the one before it (one MSM a key, where the default makes two a chain): proves ' +
        "every published key between valid too, L and H included (e.g. your own contribution's)",
    );
  return withAuditHelp(
    withMemoOptions(command)
      .option('--json', "print the findings, the hashes and every chain's contributions as JSON (see docs/audit.md)")
      .option('--quiet', 'no progress lines on stderr'),
  ).action(runAudit);
}

/** Where this machine remembers what it verified, and the option to ignore it. */
function withMemoOptions(command: Command): Command {
  return command
    .option(
      '--recheck',
      "check the ptau's sections and each contribution 0 even when this machine remembers them as verified " +
        '(and remember them anew)',
    )
    .option('--recheck-ptau', 'the same as --recheck (its earlier name)')
    .addOption(
      new Option('--ptau-memo-dir <dir>', 'where this machine remembers the ptau files whose sections passed').default(
        undefined,
        'ceremony/verified-ptau under $XDG_CACHE_HOME, else under ~/.cache',
      ),
    )
    .addOption(
      new Option(
        '--initial-key-memo-dir <dir>',
        'where this machine remembers the contributions 0 that passed their check against the r1cs and the ptau',
      ).default(undefined, 'ceremony/verified-initial-key under $XDG_CACHE_HOME, else under ~/.cache'),
    );
}

interface AuditCommandOptions {
  config: string;
  identifier?: string;
  allowLegacyTranscript?: boolean;
  quiet?: boolean;
  ptau?: string;
  ptauHash?: string;
  r1csHash: Record<string, string>;
  minContributions?: number;
  maxBeaconIterations: number;
  inProgress?: boolean;
  json?: boolean;
  beaconRpc?: string;
  everyLink?: boolean;
  recheck?: boolean;
  recheckPtau?: boolean;
  ptauMemoDir?: string;
  initialKeyMemoDir?: string;
  queueLog: boolean;
}

/** The audit the command asked for, its report printed as text or JSON; exit status 1 when it failed. */
async function runAudit(dir: string, options: AuditCommandOptions): Promise<void> {
  const report = await withStderrProgress(
    (progress) =>
      auditCeremony(dir, progress, {
        auditorConfig: options.config,
        ...(options.identifier === undefined ? {} : { identifier: options.identifier }),
        allowLegacyTranscript: options.allowLegacyTranscript === true,
        ptauPath: options.ptau,
        ptauHash: options.ptauHash,
        r1csHashes: options.r1csHash,
        minContributions: options.minContributions,
        maxBeaconIterationsExp: options.maxBeaconIterations,
        inProgress: options.inProgress,
        beaconRpcUrl: options.beaconRpc,
        chainCheck: options.everyLink === true ? 'every-link' : 'final-key',
        ptauMemoDir: options.ptauMemoDir ?? defaultPtauMemoDir(),
        initialKeyMemoDir: options.initialKeyMemoDir ?? defaultInitialKeyMemoDir(),
        recheck: options.recheck === true || options.recheckPtau === true,
        noQueueLog: !options.queueLog,
      }),
    { quiet: options.quiet },
  );
  if (options.json)
    process.stdout.write(
      `${JSON.stringify({ format: AUDIT_JSON_FORMAT, version: AUDIT_JSON_VERSION, ...report }, null, 2)}\n`,
    );
  else process.stdout.write(renderAuditReport(report));
  if (!report.ok) process.exitCode = 1;
}

/** The command's notes (pins, the finished ceremony, --every-link, the remembered ptau) and examples. */
function withAuditHelp(command: Command): Command {
  return command
    .addHelpText(
      'after',
      helpNotes(
        '\nThe configuration is yours (--config, default ceremony-data/ceremony.json here): a publication\n' +
          'whose ceremony.json differs fails (config.publication_mismatch). The ptau must be pinned: a known\n' +
          "public file (core/ptau/known-ptau-files.json), your ceremony.json's ptauHash or --ptau-hash; and\n" +
          "every r1cs: your ceremony.json's r1csHash or --r1cs-hash; else the audit fails, showing the hashes.\n" +
          'A transcript with format-1 entries fails unless --allow-legacy-transcript; a publication without\n' +
          'its queue log fails unless --no-queue-log (the order of turns then NOT checked). The ceremony must be\n' +
          'finished (every chain finalised, the manifest there and matching), else audit.not_finalised;\n' +
          "--in-progress audits a running one. The hash of the transcript's last entry is printed as the\n" +
          'ceremony identifier; --identifier HASH fails any other.\n' +
          "Each chain's final key (an unfinished chain's head) is checked against contribution 0 and its\n" +
          'records, with two MSMs a chain whatever its length: it proves the final key descends from every\n' +
          "recorded contribution. The keys between are held to their transcript hashes and the final key's\n" +
          'records, but their L and H are NOT checked; --every-link checks every key against the one before\n' +
          "it (one MSM a key), proving every published key valid (e.g. your own contribution's). --final-key\n" +
          'names the default.\n' +
          'A ptau whose sections passed is remembered in $XDG_CACHE_HOME/ceremony/verified-ptau (default\n' +
          "~/.cache/...; --ptau-memo-dir DIR elsewhere), by its hash and the check's version: a later audit\n" +
          'on it skips that check and says so; the file is hashed and compared with its pin on every audit\n' +
          'all the same. So is a contribution 0 that passed its check against the r1cs and the ptau, in\n' +
          '$XDG_CACHE_HOME/ceremony/verified-initial-key (--initial-key-memo-dir DIR elsewhere), by the hashes\n' +
          "of the three files (computed by the audit, pinned or held to the transcript) and the check's version.\n" +
          '--recheck (or its earlier name --recheck-ptau) checks both again.\n' +
          'Exit status: 0 every finding passed, 1 any failed, 2 usage error.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        [
          'a finished ceremony fetched with `ceremony fetch`, its ptau pinned by its hash',
          'ceremony audit mirror --ptau-hash HASH',
        ],
        ['a running ceremony: what it has so far', 'ceremony audit mirror --in-progress --ptau-hash HASH'],
        [
          'and only the ceremony whose identifier you compared with others',
          'ceremony audit mirror --ptau-hash HASH --identifier IDENTIFIER',
        ],
      ),
    );
}
