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
      [
        '',
        'Environment (validated once at start; a bad value stops the start with config.invalid naming it;',
        'docs/operations.md and docs/security.md explain each):',
        '  CEREMONY_DATA, PORT, HOST, OPEN_ON_START   what the options above set (an option wins)',
        '  PUBLIC_URL                public base URL: OAuth callback, links (default http://HOST:PORT)',
        '  REDIS_URL                 verification by BullMQ workers (ceremony worker) and rate limits shared',
        '                            in Redis; without it an embedded verifier process verifies',
        '  DATABASE_FILE             SQLite database (default DATA/state/coordinator.sqlite)',
        '  RECEIPT_KEY_FILE          Ed25519 key signing receipts (default DATA/state/receipt-key.pem)',
        '  QUEUE_LOG_FILE            public queue log (default DATA/transcript/queue-log.jsonl)',
        'Turns: TURN_TIMEOUT_MS (10 min), HEARTBEAT_EXTENSION_MS (2 min), MAX_TURN_MS (60 min),',
        '  COOLDOWN_MS (5 min), MAX_MISSED_TURNS (3), PRESENCE_MS (60 s), TAKE_TURN_MS (30 s),',
        '  TURN_SILENCE_MS (2 min: a taken turn whose client falls silent is missed), DISCONNECT_GRACE_MS',
        '  (10 s: one whose page or terminal closed is passed over, or its turn ended, after it);',
        '  the last four 0: off.',
        '  MAX_PRESENCE_STREAMS (500: presence streams held open at once, each a file descriptor).',
        'Limits: RATE_LIMIT_WINDOW_MS (60 s), RATE_LIMIT_SIGN_IN (20), RATE_LIMIT_CHALLENGE (20),',
        '  RATE_LIMIT_DEVICE_POLL (120), RATE_LIMIT_UPLOAD_CREATION (30), RATE_LIMIT_JOIN (10),',
        '  RATE_LIMIT_QUEUE_LOG (120), TRUST_PROXY (0),',
        '  UPLOAD_DISK_MARGIN_BYTES (free disk kept beyond the largest upload, 1 GiB),',
        '  DOWNLOAD_BUDGET_BYTES, DOWNLOAD_BUDGET_WINDOW_MS (file bytes per client address, 64 GiB a day).',
        'Sign-in: GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET (both: GitHub on), GITHUB_CALLBACK_URL,',
        '  GITHUB_MIN_FOLLOWERS (1), GITHUB_MIN_FOLLOWING (5), GITHUB_MIN_PUBLIC_REPOS (2),',
        '  GITHUB_MIN_ACCOUNT_AGE_DAYS (30), GITHUB_AUTHORIZATION_URL, GITHUB_TOKEN_URL,',
        "  GITHUB_USER_PROFILE_URL, GITHUB_DEVICE_CODE_URL (GitHub's), SEMAPHORE_GROUP_MEMBERS (Semaphore on),",
        '  SEMAPHORE_ROOT_DURATION_MS (1 h), SEMAPHORE_MAX_CHALLENGES (10000), COORDINATOR_GITHUB_IDS,',
        '  COORDINATOR_TOKEN, DEMO_SIGN_IN (on for a test network on loopback), SECURE_COOKIES (on with https),',
        '  SESSIONS_PER_PRINCIPAL (5), MAX_SESSIONS (100000).',
        'Metrics: METRICS_TOKEN (GET /metrics beyond loopback with Authorization: Bearer TOKEN).',
      ].join('\n'),
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
