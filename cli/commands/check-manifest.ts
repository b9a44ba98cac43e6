/** `ceremony check-manifest`: checks the delta manifest against the ceremony's final keys. */
import { Command } from 'commander';
import { checkManifest } from '../../core/deployment/check-manifest.ts';
import { readManifestFile } from '../../core/deployment/read-manifest-file.ts';
import { renderCheckReport } from '../../core/deployment/render-check-report.ts';
import { helpExamples, helpNotes } from './command-help.ts';
import { auditorConfigOption } from './shared-options.ts';

export function checkManifestCommand(): Command {
  return new Command('check-manifest')
    .description("check the delta manifest against the ceremony's final keys: every verifier, each its key's δ")
    .argument('<manifest.json>', 'delta manifest: verifier name → { "deltax1", "deltax2" } (decimal strings)')
    .argument('<dir>', 'the ceremony folder (published, or the data folder): ceremony.json, transcript/, final/')
    .addOption(auditorConfigOption("the folder's must agree with it, and its circuits and verifier names are used"))
    .addHelpText(
      'after',
      helpNotes(
        "\nThe folder's ceremony.json must agree with yours (--config; config.publication_mismatch).\n" +
          'Every verifier ceremony.json names must have an entry and every entry must name one of them\n' +
          "(deployment.manifest_mismatch). Each key's verification key is exported from final/<circuit>.zkey\n" +
          "once its BLAKE2b-512 is the transcript's; without that file the verifier is a MISMATCH (the\n" +
          'published vkey.json is not committed), and each verifier name must be the one the transcript\n' +
          'commits for its key. Prints the ceremony identifier, then "NAME match" or "NAME MISMATCH"\n' +
          'per verifier; reasons go to stderr. Exit status: 0 every verifier matches, 1 any MISMATCH (or the\n' +
          'ceremony not finalised), 2 usage or input file error.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples([
        'the manifest a publication carries, against its final keys',
        'ceremony check-manifest mirror/final/manifest.json mirror',
      ]),
    )
    .action(async (manifestPath: string, ceremonyDir: string, options: { config: string }) => {
      const manifest = await readManifestFile(manifestPath);
      const report = await checkManifest({ manifest, ceremonyDir, auditorConfig: options.config });
      const rendered = renderCheckReport(report);
      process.stdout.write(`ceremony identifier: ${report.identifier}\n${rendered.stdout}`);
      process.stderr.write(rendered.stderr);
      process.exitCode = rendered.exitCode;
    });
}
