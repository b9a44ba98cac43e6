/** The beacon's chain, for the console's announcement and finalise (coordinator-router.ts). */
import { z } from 'zod';
import { DEFAULT_CONFIRMATIONS } from '../../core/finalise/beacon-announcement.ts';
import { settingsFragment } from '../config/setting.ts';

export const BEACON_SETTINGS = settingsFragment(
  {
    BEACON_RPC_URL: {
      group: 'beacon',
      schema: z.string().url().optional(),
      doc:
        "a JSON-RPC endpoint of the beacon's chain: the console's announcement checks the block is still ahead, " +
        'finalise reads its hash (never logged or sent: it may carry an API key)',
      unset: 'none: the console cannot announce, and its finalise takes the beacon as given',
    },
    BEACON_CONFIRMATIONS: {
      group: 'beacon',
      // The CLI's finalise takes the same default, so it stays in core.
      schema: z.coerce.number().int().nonnegative().default(DEFAULT_CONFIRMATIONS),
      doc: 'blocks on top of the announced one before finalise takes its hash (Ethereum finalises in 64)',
    },
  },
  (e) => ({ beacon: Object.freeze({ rpcUrl: e.BEACON_RPC_URL, confirmations: e.BEACON_CONFIRMATIONS }) }),
);
