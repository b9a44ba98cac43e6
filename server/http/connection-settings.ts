/**
 * The settings of the connections and answers: downloads at once (download-slots.ts), the minimum
 * transfer rate (slow-reader-guard.ts) and the idle keep-alive (server-timeouts.ts). Their defaults
 * are written here only; those modules' own fallbacks derive from them.
 */
import { z } from 'zod';
import { countSetting, durationMsSetting, settingsFragment } from '../config/setting.ts';

export const CONNECTION_SETTINGS = settingsFragment(
  {
    MAX_DOWNLOADS: {
      group: 'limits',
      schema: z.coerce.number().int().positive().optional(),
      doc:
        'file downloads (keys, inputs, r1cs, ptau, final files) in progress at once, all clients together; ' +
        "beyond, 503 download.server_busy; a turn's holder's own downloads are not counted",
      unset: 'an eighth of the open files left beyond a reserve at start, at most 2000',
    },
    MAX_DOWNLOADS_PER_ADDRESS: {
      group: 'limits',
      // A browser opens at most six connections to a host, and `ceremony fetch` downloads one file at
      // a time: a few people behind one address fit in 8.
      schema: countSetting(8),
      doc: "file downloads in progress at once per client address (a turn's holder: for their turn); beyond, 429",
    },
    MIN_TRANSFER_BYTES_PER_SECOND: {
      group: 'limits',
      // 8 KiB/s (64 kbit/s) over a minute: far below any link a contributor takes a turn on (a turn's
      // inputs at 2^18 are 15.6 MB), and a minute rides out a stall of the network; a reader at this
      // pace pays for the socket it holds with its own bandwidth.
      schema: z.coerce.number().int().nonnegative().default(8192),
      doc:
        'the least a client must read of any answer per second, on average over MIN_TRANSFER_WINDOW_MS, while ' +
        'the answer waits for it; slower, its connection is closed; 0: no minimum',
    },
    MIN_TRANSFER_WINDOW_MS: {
      group: 'limits',
      schema: durationMsSetting(60_000),
      doc: 'the window of MIN_TRANSFER_BYTES_PER_SECOND',
    },
    HTTP_KEEP_ALIVE_MS: {
      group: 'serving',
      schema: durationMsSetting(65_000),
      doc:
        "how long an idle keep-alive connection is kept: above a reverse proxy's own idle timeout for its " +
        'connections to the coordinator (nginx: 60 s), or the proxy may send a request on a connection being ' +
        'closed',
    },
  },
  (e, { descriptors }) => ({
    /** The file downloads' limits (download-slots.ts). */
    downloads: Object.freeze({
      perAddress: e.MAX_DOWNLOADS_PER_ADDRESS,
      total: e.MAX_DOWNLOADS ?? descriptors.maxDownloads,
    }),
    /** The minimum transfer rate of every answer (slow-reader-guard.ts). */
    slowReaders: Object.freeze({
      minBytesPerSecond: e.MIN_TRANSFER_BYTES_PER_SECOND,
      windowMs: e.MIN_TRANSFER_WINDOW_MS,
    }),
    /** The HTTP server's connections (server-timeouts.ts). */
    http: Object.freeze({ keepAliveMs: e.HTTP_KEEP_ALIVE_MS, maxConnections: descriptors.maxConnections }),
    /** How the soft limit of open files was shared out (its figures are defaults of the settings above). */
    descriptors: Object.freeze(descriptors),
  }),
);
