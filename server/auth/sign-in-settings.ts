/**
 * The sign-in settings: each variable declared once, with its schema, default and doc line (as the
 * other modules' fragments declare theirs), validated with the rest of the configuration at start-up
 * (server/config/server-config.ts), then turned into the auth section (auth-config.ts), which checks
 * how they combine once the ceremony is read. Their defaults are auth-config.ts's own.
 * Secrets come only from here: GITHUB_CLIENT_SECRET, COORDINATOR_TOKEN. An empty variable counts
 * as unset (a compose file passes `${GITHUB_CLIENT_ID:-}` through).
 */
import { z } from 'zod';
import { parseAuthConfig, SEMAPHORE_DEFAULTS, type AuthConfig } from './auth-config.ts';
import { isLoopbackHost } from './demo-sign-in.ts';
import { declareSettings, optionalBooleanSetting, schemaOfSettings, settingsError } from '../config/setting.ts';

/** The auth section's own defaults (GitHub's endpoints and minimums, session caps): shown as this section's. */
const AUTH_DEFAULTS = parseAuthConfig({ github: { clientId: '-', clientSecret: '-' } });
const GITHUB_DEFAULTS = AUTH_DEFAULTS.github!;

const wholeNumber = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const AT_LEAST_ONE = 'must be a whole number of at least 1';
/** A cap that 0 would turn into "refuse everything": a whole number from 1, its refusal saying so. */
const atLeastOne = (fallback: number) =>
  z.coerce
    .number({ invalid_type_error: AT_LEAST_ONE })
    .refine((n) => Number.isSafeInteger(n) && n >= 1, AT_LEAST_ONE)
    .default(fallback);
const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );

export const SIGN_IN_SETTINGS = declareSettings({
  GITHUB_CLIENT_ID: {
    group: 'signIn',
    schema: z.string().optional(),
    doc: "the GitHub OAuth app's client id; with GITHUB_CLIENT_SECRET, GitHub sign-in is on (page and terminal)",
    unset: 'GitHub sign-in off',
  },
  GITHUB_CLIENT_SECRET: {
    group: 'signIn',
    schema: z.string().optional(),
    doc: "the OAuth app's client secret; set both or neither",
    unset: 'GitHub sign-in off',
  },
  GITHUB_CALLBACK_URL: {
    group: 'signIn',
    schema: z.string().optional(),
    doc: 'where GitHub sends the browser back',
    unset: 'PUBLIC_URL/auth/github/callback',
  },
  GITHUB_MIN_FOLLOWERS: {
    group: 'signIn',
    schema: wholeNumber(GITHUB_DEFAULTS.minimums.followers),
    doc: 'followers a GitHub account must have',
  },
  GITHUB_MIN_FOLLOWING: {
    group: 'signIn',
    schema: wholeNumber(GITHUB_DEFAULTS.minimums.following),
    doc: 'accounts it must follow',
  },
  GITHUB_MIN_PUBLIC_REPOS: {
    group: 'signIn',
    schema: wholeNumber(GITHUB_DEFAULTS.minimums.publicRepos),
    doc: 'public repositories it must own',
  },
  GITHUB_MIN_ACCOUNT_AGE_DAYS: {
    group: 'signIn',
    schema: wholeNumber(GITHUB_DEFAULTS.minimums.accountAgeDays),
    doc: 'its age in days',
  },
  GITHUB_AUTHORIZATION_URL: {
    group: 'signIn',
    schema: z.string().url().default(GITHUB_DEFAULTS.authorizationUrl),
    doc: "GitHub's authorize endpoint (tests point the four endpoints at an emulator)",
  },
  GITHUB_TOKEN_URL: {
    group: 'signIn',
    schema: z.string().url().default(GITHUB_DEFAULTS.tokenUrl),
    doc: "GitHub's token endpoint",
  },
  GITHUB_USER_PROFILE_URL: {
    group: 'signIn',
    schema: z.string().url().default(GITHUB_DEFAULTS.userProfileUrl),
    doc: "GitHub's user endpoint, whose answer the minimums are checked against",
  },
  GITHUB_DEVICE_CODE_URL: {
    group: 'signIn',
    schema: z.string().url().default(GITHUB_DEFAULTS.deviceCodeUrl),
    doc: "GitHub's device-code endpoint (the terminal's sign-in, RFC 8628)",
  },
  COORDINATOR_GITHUB_IDS: {
    group: 'signIn',
    schema: list,
    doc: 'numeric GitHub ids (never logins) of the coordinators, comma-separated',
    unset: 'none',
  },
  COORDINATOR_TOKEN: {
    group: 'signIn',
    schema: z.string().optional(),
    doc: 'a shared secret of at least 16 characters for coordinator sign-in (POST /auth/coordinator)',
    unset: 'none: that sign-in off',
  },
  SEMAPHORE_GROUP_MEMBERS: {
    group: 'signIn',
    schema: list,
    doc: 'identity commitments (decimal) of the group that may contribute anonymously, comma-separated',
    unset: 'Semaphore sign-in off',
  },
  SEMAPHORE_ROOT_DURATION_MS: {
    group: 'signIn',
    schema: wholeNumber(SEMAPHORE_DEFAULTS.rootDurationMs),
    doc: 'how long a replaced group root stays usable',
  },
  SEMAPHORE_MAX_CHALLENGES: {
    group: 'signIn',
    schema: z.coerce.number().int().positive().default(SEMAPHORE_DEFAULTS.maxChallenges),
    doc: 'sign-in challenges outstanding at most',
  },
  SEMAPHORE_MAX_PROOF_CHECKS: {
    group: 'signIn',
    schema: atLeastOne(SEMAPHORE_DEFAULTS.maxProofChecks),
    doc:
      'Semaphore proofs verified at once, all clients together (each tens of ms of CPU); beyond, the sign-in ' +
      'answers 503 auth.proof_checks_busy with Retry-After, its challenge unspent',
  },
  DEMO_SIGN_IN: {
    group: 'signIn',
    schema: optionalBooleanSetting(),
    doc: 'sign-in by name; refused at start unless the ceremony is a test network served on loopback',
    unset: 'true for a test network on loopback, else false',
  },
  SECURE_COOKIES: {
    group: 'signIn',
    schema: optionalBooleanSetting(),
    doc: 'true marks the session cookie Secure (always, whatever this says, when PUBLIC_URL is https)',
    unset: 'true when PUBLIC_URL is https, else false',
  },
  SESSIONS_PER_PRINCIPAL: {
    group: 'signIn',
    schema: z.coerce.number().int().positive().default(AUTH_DEFAULTS.sessionsPerPrincipal),
    doc: 'sessions one identity may hold; a new sign-in ends the oldest beyond it',
  },
  MAX_SESSIONS: {
    group: 'signIn',
    schema: z.coerce.number().int().positive().default(AUTH_DEFAULTS.maxSessions),
    doc: 'live sessions in all; beyond, sign-in answers rate.limited, except for coordinators',
  },
});

const signInSchema = schemaOfSettings(SIGN_IN_SETTINGS).refine(
  (e) => (e.GITHUB_CLIENT_ID === undefined) === (e.GITHUB_CLIENT_SECRET === undefined),
  { message: 'GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together: set both for GitHub sign-in, or neither' },
);

export type SignInEnv = Readonly<z.output<typeof signInSchema>>;

/** The sign-in variables of `env`, validated (`config.invalid` naming each bad one); empty ones count as unset. */
export function parseSignInEnv(env: Readonly<Record<string, string | undefined>>): SignInEnv {
  const given = Object.fromEntries(
    Object.keys(SIGN_IN_SETTINGS).flatMap((name) => (env[name] ? [[name, env[name]]] : [])),
  );
  const parsed = signInSchema.safeParse(given);
  if (!parsed.success) throw settingsError('sign-in', parsed.error);
  return Object.freeze(parsed.data);
}

/** The auth section from the validated sign-in settings and what the ceremony and the server say. */
export function authConfigFromEnv(
  env: SignInEnv,
  context: { publicUrl: string; testNetwork: boolean; host: string },
): AuthConfig {
  const github =
    env.GITHUB_CLIENT_ID !== undefined && env.GITHUB_CLIENT_SECRET !== undefined
      ? {
          clientId: env.GITHUB_CLIENT_ID,
          clientSecret: env.GITHUB_CLIENT_SECRET,
          callbackUrl: env.GITHUB_CALLBACK_URL ?? `${context.publicUrl}/auth/github/callback`,
          authorizationUrl: env.GITHUB_AUTHORIZATION_URL,
          tokenUrl: env.GITHUB_TOKEN_URL,
          userProfileUrl: env.GITHUB_USER_PROFILE_URL,
          deviceCodeUrl: env.GITHUB_DEVICE_CODE_URL,
          minimums: {
            followers: env.GITHUB_MIN_FOLLOWERS,
            following: env.GITHUB_MIN_FOLLOWING,
            publicRepos: env.GITHUB_MIN_PUBLIC_REPOS,
            accountAgeDays: env.GITHUB_MIN_ACCOUNT_AGE_DAYS,
          },
          coordinatorGithubIds: env.COORDINATOR_GITHUB_IDS,
        }
      : undefined;
  const demoDefault = context.testNetwork && isLoopbackHost(context.host);
  return parseAuthConfig({
    github,
    semaphore:
      env.SEMAPHORE_GROUP_MEMBERS.length > 0
        ? {
            groupMembers: env.SEMAPHORE_GROUP_MEMBERS,
            rootDurationMs: env.SEMAPHORE_ROOT_DURATION_MS,
            maxChallenges: env.SEMAPHORE_MAX_CHALLENGES,
            maxProofChecks: env.SEMAPHORE_MAX_PROOF_CHECKS,
          }
        : undefined,
    coordinatorToken: env.COORDINATOR_TOKEN,
    demo: { enabled: env.DEMO_SIGN_IN ?? demoDefault },
    secureCookies: env.SECURE_COOKIES === true || context.publicUrl.startsWith('https:'),
    sessionsPerPrincipal: env.SESSIONS_PER_PRINCIPAL,
    maxSessions: env.MAX_SESSIONS,
  });
}
