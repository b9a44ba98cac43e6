/** `ceremony verify-deployment`: checks deployed verifier contracts against the delta manifest. */
import { Command } from 'commander';
import { readManifestFile } from '../../core/deployment/read-manifest-file.ts';
import { readVerifiersFile } from '../../core/deployment/read-verifiers-file.ts';
import { renderCheckReport } from '../../core/deployment/render-check-report.ts';
import { verifyDeployment } from '../../core/deployment/verify-deployment.ts';

export function verifyDeploymentCommand(): Command {
  return new Command('verify-deployment')
    .description('check that deployed verifier contracts carry the delta points of the manifest')
    .argument('<rpc-url>', 'JSON-RPC endpoint (http or https) of the network to check')
    .argument('<manifest.json>', 'delta manifest: verifier name → { "deltax1", "deltax2" } (decimal strings)')
    .argument('<verifiers.json>', 'verifier name → deployed contract address on that network')
    .addHelpText(
      'after',
      '\nPrints "NAME match" or "NAME MISMATCH" per verifier; reasons go to stderr.\n' +
        'Exit status: 0 every verifier matches, 1 any MISMATCH, 2 usage or input file error.',
    )
    .action(async (rpcUrl: string, manifestPath: string, verifiersPath: string) => {
      const manifest = await readManifestFile(manifestPath);
      const verifiers = await readVerifiersFile(verifiersPath);
      const rendered = renderCheckReport(await verifyDeployment({ rpcUrl, manifest, verifiers }));
      process.stdout.write(rendered.stdout);
      process.stderr.write(rendered.stderr);
      process.exitCode = rendered.exitCode;
    });
}
