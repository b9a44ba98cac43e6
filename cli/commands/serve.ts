/**
 * `ceremony serve`: the coordinator server (server/start-coordinator.ts) with the built browser app.
 * Its help lists every setting from their declarations (server/config/settings-doc.ts).
 */
import { Command, Option } from 'commander';
import { settingsByGroup } from '../../server/config/settings-doc.ts';
import { helpExamples, helpItems, helpNotes } from './command-help.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';

export function serveCommand(): Command {
  const command = new Command('serve')
    .description(
      'run the coordinator server (sign-in, queues, uploads, verification, ' +
        'transcript API); config from the environment',
    )
    .addOption(
      new Option('--data <dir>', 'ceremony data folder').default(undefined, '$CEREMONY_DATA, else ceremony-data'),
    )
    .addOption(new Option('--port <n>', 'port to listen on').default(undefined, '$PORT, else 8080'))
    .addOption(new Option('--host <host>', 'interface to listen on').default(undefined, '$HOST, else 127.0.0.1'))
    .addOption(new Option('--open', 'open the ceremony at start').default(undefined, '$OPEN_ON_START, else false'))
    .addHelpText(
      'after',
      helpNotes(
        'Settings come from the environment, each validated once at start (a bad value stops the start with ' +
          'config.invalid naming it); a flag wins over its variable. Every one, with its default ' +
          '(docs/operations.md has the same list, docs/security.md the limits and sign-in at length):',
      ),
    );
  for (const group of settingsByGroup()) {
    command.addHelpText(
      'after',
      helpItems(
        `${group.title}:`,
        group.settings.map((s) => [s.name, `${s.doc} (default: ${s.shownDefault})`] as const),
      ),
    );
  }
  return command
    .addHelpText(
      'after',
      helpExamples(
        ["a test network's coordinator on loopback, open at once", 'ceremony serve --data ceremony-data --open'],
        [
          'a public coordinator behind a TLS proxy, verification by `ceremony worker` processes on Redis',
          'HOST=0.0.0.0 PUBLIC_URL=https://ceremony.example \\\n' +
            'REDIS_URL=redis://127.0.0.1:6379 ceremony serve --data /srv/ceremony',
        ],
      ),
    )
    .action(async (options: { data?: string; port?: string; host?: string; open?: boolean }) => {
      const config = loadServerConfig(process.env, {
        CEREMONY_DATA: options.data,
        PORT: options.port,
        HOST: options.host,
        OPEN_ON_START: options.open ? 'true' : undefined,
      });
      // Loaded here, not at the top: `ceremony serve --help` needs none of Express, Redis or snarkjs.
      const { builtWebDir, startCoordinator, jsonLog } = await import('../../server/start-coordinator.ts');
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
