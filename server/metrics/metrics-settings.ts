/** Who may read GET /metrics from outside loopback (metrics-router.ts). */
import { z } from 'zod';
import { settingsFragment } from '../config/setting.ts';

export const METRICS_SETTINGS = settingsFragment(
  {
    METRICS_TOKEN: {
      group: 'metrics',
      schema: z
        .string()
        .regex(
          /^[A-Za-z0-9._~+/=-]{16,256}$/,
          'must be 16 to 256 characters usable in a bearer token (letters, digits, . _ ~ + / = -)',
        )
        .optional(),
      doc: 'lets a Prometheus scraper read GET /metrics from outside loopback with `Authorization: Bearer TOKEN`',
      unset: 'none: loopback only',
    },
  },
  (e) => ({ metricsToken: e.METRICS_TOKEN }),
);
