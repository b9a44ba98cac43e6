/** `ceremony check-manifest`: checks the delta manifest against the ceremony's final keys. */
import { Command } from 'commander';
import { checkManifest } from '../../core/deployment/check-manifest.ts';
import { readManifestFile } from '../../core/deployment/read-manifest-file.ts';
import { renderCheckReport } from '../../core/deployment/render-check-report.ts';

export function checkManifestCommand(): Command {
  return new Command('check-manifest')
    .description("check the delta manifest against the verification keys of the ceremony's final keys")
    .argument('<manifest.json>', 'delta manifest: verifier name → { "deltax1", "deltax2" } (decimal strings)')
    .argument('<dir>', 'directory of the final keys, <circuit>.zkey (VerifierTreeUpdate → treeUpdate.zkey)')
    .addHelpText(
      'after',
      "\nEach key's verification key is exported from <circuit>.zkey; only when that file is absent is\n" +
        '<circuit>.vkey.json used instead, with a warning. Prints "NAME match" or "NAME MISMATCH" per\n' +
        'verifier; reasons go to stderr. Exit status: 0 every verifier matches, 1 any MISMATCH,\n' +
        '2 usage or input file error.',
    )
    .action(async (manifestPath: string, finalDir: string) => {
      const manifest = await readManifestFile(manifestPath);
      const rendered = renderCheckReport(await checkManifest({ manifest, finalDir }));
      process.stdout.write(rendered.stdout);
      process.stderr.write(rendered.stderr);
      process.exitCode = rendered.exitCode;
    });
}
