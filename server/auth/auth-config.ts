/**
 * The `auth` section of the coordinator's configuration: which sign-in methods are on and how
 * each is tuned. Parsed once at start-up with `parseAuthConfig`, then passed in explicitly.
 * Secrets (GitHub client secret, coordinator token) come from the environment; the caller puts
 * them into the object it parses, this module never reads `process.env`.
 */
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';

const decimalFieldElement = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/, 'an identity commitment is a decimal string')
  .refine((value) => BigInt(value) < BN254_R, 'an identity commitment must be below the SNARK scalar field');

const githubMinimumsSchema = z
  .object({
    /** Followers the account must have. Default 1 (as in the most used ceremony tool). */
    followers: z.number().int().nonnegative().default(1),
    /** Accounts the account must follow. Default 5. */
    following: z.number().int().nonnegative().default(5),
    /** Public repositories the account must own. Default 2. */
    publicRepos: z.number().int().nonnegative().default(2),
    /** Minimum age of the account (from `created_at`), in days. Default 30. */
    accountAgeDays: z.number().nonnegative().default(30),
  })
  .strict();

const githubSchema = z
  .object({
    /** OAuth App client id. */
    clientId: z.string().min(1),
    /** OAuth App client secret (from the environment). */
    clientSecret: z.string().min(1),
    /**
     * Where GitHub sends the browser back. A path is resolved against the request's host, an
     * absolute URL is used as is (set one behind a proxy). Default `/auth/github/callback`.
     */
    callbackUrl: z.string().min(1).default('/auth/github/callback'),
    /** GitHub's authorize endpoint (tests point it at an emulator). */
    authorizationUrl: z.string().url().default('https://github.com/login/oauth/authorize'),
    /** GitHub's token endpoint (the web flow's code exchange, and the device flow's polling). */
    tokenUrl: z.string().url().default('https://github.com/login/oauth/access_token'),
    /** GitHub's device-code endpoint (RFC 8628; the terminal client's sign-in). */
    deviceCodeUrl: z.string().url().default('https://github.com/login/device/code'),
    /** GitHub's authenticated-user endpoint; its JSON is what the minimums are checked against. */
    userProfileUrl: z.string().url().default('https://api.github.com/user'),
    /** Account minimums checked at every GitHub sign-in (a Sybil brake, not an identity check). */
    minimums: githubMinimumsSchema.default({}),
    /** Numeric GitHub user ids (never logins: logins can be renamed and re-registered) of coordinators. */
    coordinatorGithubIds: z
      .array(z.union([z.number().int().positive(), z.string().regex(/^[1-9][0-9]*$/)]).transform(String))
      .default([]),
    /** Where the browser lands after a successful sign-in. Default `/`. */
    successRedirect: z.string().min(1).default('/'),
    /**
     * Where a browser lands when GitHub sign-in is refused, with `?signInError=<code>` added (the
     * page explains the code). Default `/`. Clients that do not ask for HTML get the JSON error.
     */
    failureRedirect: z.string().min(1).default('/'),
    /** How long an issued OAuth `state` stays valid, in ms. Default 10 minutes. */
    stateTtlMs: z
      .number()
      .int()
      .positive()
      .default(10 * 60_000),
  })
  .strict();

/** Defaults of the `semaphore` section, for code that runs a Semaphore group without that section. */
export const SEMAPHORE_DEFAULTS = Object.freeze({
  rootWindow: 3,
  rootDurationMs: 60 * 60_000,
  challengeTtlMs: 5 * 60_000,
  maxChallenges: 10_000,
  maxProofChecks: 8,
});

const semaphoreSchema = z
  .object({
    /** Identity commitments (decimal strings) of the group allowed to contribute anonymously. */
    groupMembers: z.array(decimalFieldElement).min(1),
    /**
     * How many roots before the current one are still accepted, so a proof made just before a
     * membership change is not refused. Default 3.
     */
    rootWindow: z.number().int().nonnegative().default(SEMAPHORE_DEFAULTS.rootWindow),
    /**
     * How long a replaced root stays usable, in ms (Semaphore's `merkleTreeDuration`). A member
     * removal ends it at once for every earlier root. Default 1 hour.
     */
    rootDurationMs: z.number().int().nonnegative().default(SEMAPHORE_DEFAULTS.rootDurationMs),
    /** How long a sign-in challenge stays valid, in ms. Default 5 minutes. */
    challengeTtlMs: z.number().int().positive().default(SEMAPHORE_DEFAULTS.challengeTtlMs),
    /**
     * Live (unused, unexpired) challenges at most (besides a share per address: semaphore-challenges.ts); beyond,
     * challenge creation answers `rate.limited`. Default 10 000.
     */
    maxChallenges: z.number().int().positive().default(SEMAPHORE_DEFAULTS.maxChallenges),
    /**
     * Proof verifications running at once, server-wide (each tens of ms of the HTTP process's CPU); beyond,
     * `POST /semaphore` answers `503 auth.proof_checks_busy` before its challenge is spent. Default 8.
     */
    maxProofChecks: z.number().int().positive().default(SEMAPHORE_DEFAULTS.maxProofChecks),
  })
  .strict();

const authConfigSchema = z
  .object({
    /** GitHub sign-in; absent = off. */
    github: githubSchema.optional(),
    /** Semaphore (anonymous group membership) sign-in; absent = off. */
    semaphore: semaphoreSchema.optional(),
    /**
     * Shared secret for coordinator sign-in (`POST /auth/coordinator`), from the environment;
     * absent = that route is off. At least 16 characters.
     */
    coordinatorToken: z.string().min(16, 'the coordinator token must be at least 16 characters').optional(),
    demo: z
      .object({
        /**
         * Loopback-only demo sign-in (`POST /auth/demo`). Only allowed for a test-network ceremony
         * on a server bound to loopback; the server refuses to start otherwise. Default off.
         */
        enabled: z.boolean().default(false),
      })
      .strict()
      .default({}),
    /** Lifetime of a session, in ms (fixed, not sliding). Default 12 hours. */
    sessionTtlMs: z
      .number()
      .int()
      .positive()
      .default(12 * 60 * 60_000),
    /** Sessions one principal may hold at once; a new sign-in ends the oldest beyond it. Default 5. */
    sessionsPerPrincipal: z.number().int().positive().default(5),
    /**
     * Live sessions at most (expired ones are swept first); beyond, sign-in answers `rate.limited`
     * except for coordinators, so a flood cannot lock the coordinator out. Default 100 000.
     */
    maxSessions: z.number().int().positive().default(100_000),
    /** Mark the session cookie `Secure` (set whenever the server is reached over HTTPS). Default false. */
    secureCookies: z.boolean().default(false),
  })
  .strict();

export type AuthConfig = z.output<typeof authConfigSchema>;
export type AuthConfigInput = z.input<typeof authConfigSchema>;

/** Validates and fills defaults; throws `config.invalid` naming each bad field. */
export function parseAuthConfig(input: unknown): AuthConfig {
  const result = authConfigSchema.safeParse(input ?? {});
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `auth.${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new CoordinatorError('config.invalid', `Invalid auth configuration: ${issues}`);
  }
  return Object.freeze(result.data);
}
