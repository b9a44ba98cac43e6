/** Every `ceremony` sub-command, in the order `--help` lists them. */
import type { Command } from 'commander';
import { initCommand } from './init.ts';
import { contributeCommand } from './contribute.ts';
import { verifyCommand } from './verify.ts';
import { finaliseCommand } from './finalise.ts';
import { devPtauCommand } from './dev-ptau.ts';
import { auditCommand } from './audit.ts';
import { checkManifestCommand } from './check-manifest.ts';
import { verifyDeploymentCommand } from './verify-deployment.ts';
import { verifyLinkCommand } from './verify-link.ts';
import { checkFeesCommand } from './check-fees.ts';
import { workerCommand } from './worker.ts';
import { serveCommand } from './serve.ts';
import { publishCommand } from './publish.ts';

export const COMMANDS: Array<() => Command> = [initCommand, contributeCommand, verifyCommand, finaliseCommand, auditCommand, devPtauCommand, checkManifestCommand, publishCommand, verifyDeploymentCommand, checkFeesCommand, verifyLinkCommand, serveCommand, workerCommand];
