/** TRUST_PROXY: the reverse proxies whose X-Forwarded-For is believed (trusted-proxies.ts checks the list). */
import { z } from 'zod';
import { settingsFragment } from '../config/setting.ts';
import { parseTrustedProxies } from './trusted-proxies.ts';

export const TRUSTED_PROXY_SETTINGS = settingsFragment(
  {
    TRUST_PROXY: {
      group: 'limits',
      schema: z
        .string()
        .optional()
        .transform((raw, ctx) => {
          const parsed = parseTrustedProxies(raw ?? '');
          if ('proxies' in parsed) return parsed.proxies;
          ctx.addIssue({ code: 'custom', message: parsed.refused });
          return z.NEVER;
        }),
      doc:
        'the reverse proxies whose X-Forwarded-For names the client (rate limits and the download budget key on ' +
        'its address), by the addresses they connect from: addresses and CIDRs, comma-separated (172.28.0.0/16; ' +
        'loopback for a proxy on this machine); never a hop count',
      unset: 'none: every client is the address it connects from',
    },
  },
  (e) => ({
    /** The trusted proxies' addresses, CIDRs or named ranges (Express `trust proxy`); empty: none. */
    trustProxy: Object.freeze([...e.TRUST_PROXY]) as readonly string[],
  }),
);
