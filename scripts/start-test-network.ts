/**
 * `npm start`: the coordinator on embedded defaults, on a machine with nothing but Node. It makes
 * the development ptau once (secret public: test network only), initialises the project's
 * test-network ceremony in ceremony-data/ if it is not yet, and serves it on 127.0.0.1:8080 with
 * SQLite, an embedded verifier process and the loopback-only demo sign-in, ceremony open. It
 * prints a coordinator sign-in link with a fresh random token (valid until this process ends), so
 * the console can be entered without configuring COORDINATOR_TOKEN or GitHub ids.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { loadCeremonyConfig } from '../core/config/ceremony-config.ts';
import { createDevPtau } from '../core/ptau/dev-ptau.ts';
import { openCeremony } from '../core/ceremony/open-ceremony.ts';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { createProgressRenderer } from '../cli/progress/progress-renderer.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import { loadServerConfig } from '../server/config/server-config.ts';
import { builtWebDir, startCoordinator, jsonLog } from '../server/start-coordinator.ts';
import { COORDINATOR_LINK_PATH } from '../server/auth/coordinator-link.ts';
import { isLoopbackHost } from '../server/auth/demo-sign-in.ts';

silenceSnarkjsHandleWarnings();
const dataDir = process.env.CEREMONY_DATA ?? 'ceremony-data';
const config = await loadCeremonyConfig(dataDir);
if (!config.testNetwork)
  throw new Error(`${dataDir} is not a test-network ceremony; start a real one with \`ceremony serve\``);
if (
  !(await stat(config.ptauPath).then(
    () => true,
    () => false,
  ))
) {
  process.stderr.write(
    `making the development ptau ${config.ptau} (once, ~15 s; its secret is public: test network only)\n`,
  );
  await createDevPtau(10, config.ptauPath);
}
if ((await openCeremony(dataDir)).transcript.entries.length === 0) {
  process.stderr.write(`initialising the ceremony in ${dataDir}\n`);
  await initCeremony(dataDir, createProgressRenderer(process.stderr).progress);
  await releaseBn128();
}
const webDir = builtWebDir();
const serverConfig = loadServerConfig({ OPEN_ON_START: 'true', ...process.env, CEREMONY_DATA: dataDir });
// Only on loopback: anyone who can reach the port could otherwise try the link.
const linkToken = isLoopbackHost(serverConfig.host) ? randomBytes(32).toString('base64url') : undefined;
const coordinator = await startCoordinator(serverConfig, { webDir, coordinatorLinkToken: linkToken });
process.stdout.write(
  `coordinator listening on ${coordinator.url} (test network, demo sign-in on loopback)\n` +
    `  ceremony state: ${coordinator.url}/api/ceremony   transcript: ${coordinator.url}/api/transcript\n` +
    (webDir
      ? `  contribute: ${coordinator.url}/   public page: ` +
        `${coordinator.url}/ceremony/   console: ${coordinator.url}/console/\n`
      : '  (no browser app: run `npm run build` first)\n') +
    (linkToken
      ? `  sign in as coordinator (this run only): ${coordinator.url}${COORDINATOR_LINK_PATH}?token=${linkToken}\n`
      : ''),
);
const stop = (signal: string): void => {
  jsonLog.info('shutting down', { signal });
  void coordinator.close().then(() => process.exit(0));
};
process.once('SIGTERM', () => stop('SIGTERM'));
process.once('SIGINT', () => stop('SIGINT'));
