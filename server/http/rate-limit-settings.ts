/**
 * The rate limits' settings (rate-limits.ts) and the download budget's (download-budget.ts): their
 * defaults are written here only, and RATE_LIMIT_DEFAULTS and DOWNLOAD_BUDGET_DEFAULTS derive from them.
 */
import { z } from 'zod';
import {
  countSetting,
  declareSettings,
  durationMsSetting,
  settingsFragment,
  type SettingsValues,
} from '../config/setting.ts';

const RATE_LIMITS_DECLARED = declareSettings({
  RATE_LIMIT_WINDOW_MS: {
    group: 'limits',
    schema: durationMsSetting(60_000),
    doc: 'the window of every RATE_LIMIT_* count below (docs/security.md, rate limits)',
  },
  RATE_LIMIT_SIGN_IN: {
    group: 'limits',
    schema: countSetting(20),
    doc: 'sign-in attempts per client address, successful or not',
  },
  RATE_LIMIT_CHALLENGE: {
    group: 'limits',
    schema: countSetting(20),
    doc: 'Semaphore sign-in challenges per client address',
  },
  RATE_LIMIT_DEVICE_POLL: {
    group: 'limits',
    schema: countSetting(120),
    doc: "polls of GitHub's device flow per client address",
  },
  RATE_LIMIT_UPLOAD_CREATION: {
    group: 'limits',
    schema: countSetting(30),
    doc: 'uploads started per contributor',
  },
  RATE_LIMIT_UPLOAD_REQUESTS: {
    group: 'limits',
    schema: countSetting(600),
    doc:
      "PATCH and HEAD requests of a contributor's uploads together (a PATCH per 2 MiB of a delta, per 8 MiB of a " +
      'whole key); beyond, 429 rate.upload_requests',
  },
  RATE_LIMIT_JOIN: {
    group: 'limits',
    schema: countSetting(10),
    doc: 'joins of the queue per contributor',
  },
  RATE_LIMIT_QUEUE_LOG: {
    group: 'limits',
    schema: countSetting(120),
    doc: 'reads of the public queue log per client address',
  },
  RATE_LIMIT_CEREMONY_READS: {
    group: 'limits',
    schema: countSetting(240),
    doc:
      'whole answers of GET /api/ceremony, /api/transcript, /api/manifest and /api/receipt-key per client address ' +
      '(a 304 is free)',
  },
  RATE_LIMIT_CONTRIBUTOR_REQUESTS: {
    group: 'limits',
    schema: countSetting(600),
    doc: "a contributor's GET /api/me, presence streams opened and heartbeats together",
  },
  RATE_LIMIT_RECEIPTS: {
    group: 'limits',
    schema: countSetting(30),
    doc: "a contributor's GET /api/me/receipts",
  },
  DOWNLOAD_BUDGET_BYTES: {
    group: 'limits',
    // More than a turn, and than everything a ceremony of the service's size publishes (about 50 GB).
    schema: z.coerce
      .number()
      .int()
      .positive()
      .max(Number.MAX_SAFE_INTEGER)
      .default(64 * 1024 ** 3),
    doc:
      "bytes of files (keys, skeletons, final files, r1cs, ptau, the app's) one client address may download per " +
      "DOWNLOAD_BUDGET_WINDOW_MS (429 rate.limited beyond): more than a turn and an auditor's fetch of everything",
  },
  DOWNLOAD_BUDGET_WINDOW_MS: {
    group: 'limits',
    // A day: an auditor's fetch of everything takes hours.
    schema: durationMsSetting(24 * 60 * 60 * 1000),
    doc: 'the window of DOWNLOAD_BUDGET_BYTES',
  },
});

/** The rate limits' section (RateLimitConfig) the settings give. */
export function rateLimitsOf(e: SettingsValues<typeof RATE_LIMITS_DECLARED>) {
  return {
    windowMs: e.RATE_LIMIT_WINDOW_MS,
    signIn: e.RATE_LIMIT_SIGN_IN,
    challenge: e.RATE_LIMIT_CHALLENGE,
    devicePoll: e.RATE_LIMIT_DEVICE_POLL,
    uploadCreation: e.RATE_LIMIT_UPLOAD_CREATION,
    uploadRequests: e.RATE_LIMIT_UPLOAD_REQUESTS,
    join: e.RATE_LIMIT_JOIN,
    downloadBytes: e.DOWNLOAD_BUDGET_BYTES,
    downloadWindowMs: e.DOWNLOAD_BUDGET_WINDOW_MS,
    queueLog: e.RATE_LIMIT_QUEUE_LOG,
    ceremonyReads: e.RATE_LIMIT_CEREMONY_READS,
    contributorRequests: e.RATE_LIMIT_CONTRIBUTOR_REQUESTS,
    receiptReads: e.RATE_LIMIT_RECEIPTS,
  };
}

export const RATE_LIMIT_SETTINGS = settingsFragment(RATE_LIMITS_DECLARED, (e) => ({
  rateLimits: Object.freeze(rateLimitsOf(e)),
}));
