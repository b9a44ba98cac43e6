/** `ceremony serve`: the coordinator server (server/start-coordinator.ts) with the built browser app. */
import { Command } from 'commander';
import { CoordinatorError } from '../../core/errors.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { builtWebDir, startCoordinator, jsonLog } from '../../server/start-coordinator.ts';

export function serveCommand(): Command {
  return new Command('serve')
    .description(
      'run the coordinator server (sign-in, queues, uploads, verification, ' +
        'transcript API); config from the environment',
    )
    .option('--data <dir>', 'ceremony data folder (env CEREMONY_DATA, default ceremony-data)')
    .option('--port <n>', 'port to listen on (env PORT, default 8080)')
    .option('--host <host>', 'interface to listen on (env HOST, default 127.0.0.1)')
    .option('--open', 'open the ceremony at start (env OPEN_ON_START)')
    .addHelpText(
      'after',
      '\nEnvironment: REDIS_URL (BullMQ workers; without it an embedded ' +
        'verifier process runs it), PUBLIC_URL, DATABASE_FILE,\n' +
        'TURN_TIMEOUT_MS, HEARTBEAT_EXTENSION_MS, MAX_TURN_MS, COOLDOWN_MS, GITHUB_CLIENT_ID/SECRET, GITHUB_MIN_*,\n' +
        'UPLOAD_DISK_MARGIN_BYTES (free disk kept beyond the largest upload, default 1 GiB),\n' +
        'DOWNLOAD_BUDGET_BYTES, DOWNLOAD_BUDGET_WINDOW_MS (file bytes per client address per window, 64 GiB a day),\n' +
        'COORDINATOR_GITHUB_IDS, COORDINATOR_TOKEN, SEMAPHORE_GROUP_MEMBERS, ' +
        'DEMO_SIGN_IN, SECURE_COOKIES, METRICS_TOKEN (GET /metrics beyond loopback).\n' +
        'Limits (docs/security.md): RATE_LIMIT_WINDOW_MS, RATE_LIMIT_SIGN_IN, ' +
        'RATE_LIMIT_CHALLENGE, RATE_LIMIT_UPLOAD_CREATION,\n' +
        'TRUST_PROXY, MAX_MISSED_TURNS, SEMAPHORE_ROOT_DURATION_MS, ' +
        'SEMAPHORE_MAX_CHALLENGES, SESSIONS_PER_PRINCIPAL, MAX_SESSIONS.',
    )
    .action(async (options: { data?: string; port?: string; host?: string; open?: boolean }) => {
      const config = loadServerConfig(process.env, {
        CEREMONY_DATA: options.data,
        PORT: options.port,
        HOST: options.host,
        OPEN_ON_START: options.open ? 'true' : undefined,
      });
      // Without the app, /, /ceremony/ and /console/ would answer Express's bare "Cannot GET".
      const webDir = builtWebDir();
      if (webDir === undefined) {
        throw new CoordinatorError(
          'config.invalid',
          'the browser app is not built (web/dist is missing); run `npm run ' +
            'build` in the project folder, then start again',
        );
      }
      const coordinator = await startCoordinator(config, { webDir });
      process.stdout.write(`coordinator listening on ${coordinator.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string): void => {
          jsonLog.info('shutting down', { signal });
          void coordinator.close().then(resolve);
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
    });
}
