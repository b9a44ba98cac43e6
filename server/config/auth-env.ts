/**
 * Maps the environment to the auth section of the configuration (server/auth/auth-config.ts),
 * which validates it. Secrets come only from here: GITHUB_CLIENT_SECRET, COORDINATOR_TOKEN.
 *
 *  GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET     both set = GitHub sign-in on
 *  GITHUB_CALLBACK_URL                        default PUBLIC_URL/auth/github/callback
 *  GITHUB_AUTHORIZATION_URL, GITHUB_TOKEN_URL, GITHUB_USER_PROFILE_URL, GITHUB_DEVICE_CODE_URL   (emulators in tests)
 *  GITHUB_MIN_FOLLOWERS, GITHUB_MIN_FOLLOWING, GITHUB_MIN_PUBLIC_REPOS, GITHUB_MIN_ACCOUNT_AGE_DAYS
 *  COORDINATOR_GITHUB_IDS                     comma-separated numeric ids
 *  SEMAPHORE_GROUP_MEMBERS                    comma-separated identity commitments = Semaphore on
 *  SEMAPHORE_ROOT_DURATION_MS                 how long a replaced group root stays usable (default 1 h)
 *  SEMAPHORE_MAX_CHALLENGES                   outstanding sign-in challenges at most (default 10 000)
 *  SESSIONS_PER_PRINCIPAL, MAX_SESSIONS       session caps (default 5 per principal, 100 000 in all)
 *  COORDINATOR_TOKEN                          coordinator sign-in with a shared secret
 *  DEMO_SIGN_IN                               true/false; default true for a test network on loopback
 *  SECURE_COOKIES                             true behind HTTPS; always on when PUBLIC_URL is https
 */
import { parseAuthConfig, type AuthConfig } from '../auth/auth-config.ts';
import { isLoopbackHost } from '../auth/demo-sign-in.ts';

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function optionalNumber(value: string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : Number(value);
}

function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function authConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  context: { publicUrl: string; testNetwork: boolean; host: string },
): AuthConfig {
  const minimums = Object.fromEntries(
    Object.entries({
      followers: optionalNumber(env.GITHUB_MIN_FOLLOWERS),
      following: optionalNumber(env.GITHUB_MIN_FOLLOWING),
      publicRepos: optionalNumber(env.GITHUB_MIN_PUBLIC_REPOS),
      accountAgeDays: optionalNumber(env.GITHUB_MIN_ACCOUNT_AGE_DAYS),
    }).filter(([, v]) => v !== undefined),
  );
  const github =
    env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET
      ? Object.fromEntries(
          Object.entries({
            clientId: env.GITHUB_CLIENT_ID,
            clientSecret: env.GITHUB_CLIENT_SECRET,
            callbackUrl: env.GITHUB_CALLBACK_URL ?? `${context.publicUrl}/auth/github/callback`,
            authorizationUrl: env.GITHUB_AUTHORIZATION_URL,
            tokenUrl: env.GITHUB_TOKEN_URL,
            userProfileUrl: env.GITHUB_USER_PROFILE_URL,
            deviceCodeUrl: env.GITHUB_DEVICE_CODE_URL,
            minimums,
            coordinatorGithubIds: list(env.COORDINATOR_GITHUB_IDS),
          }).filter(([, v]) => v !== undefined),
        )
      : undefined;
  const members = list(env.SEMAPHORE_GROUP_MEMBERS);
  const demoDefault = context.testNetwork && isLoopbackHost(context.host);
  return parseAuthConfig({
    github,
    semaphore:
      members.length > 0
        ? definedOnly({
            groupMembers: members,
            rootDurationMs: optionalNumber(env.SEMAPHORE_ROOT_DURATION_MS),
            maxChallenges: optionalNumber(env.SEMAPHORE_MAX_CHALLENGES),
          })
        : undefined,
    coordinatorToken: env.COORDINATOR_TOKEN || undefined,
    demo: { enabled: env.DEMO_SIGN_IN === undefined ? demoDefault : env.DEMO_SIGN_IN === 'true' },
    secureCookies: env.SECURE_COOKIES === 'true' || context.publicUrl.startsWith('https:'),
    ...definedOnly({
      sessionsPerPrincipal: optionalNumber(env.SESSIONS_PER_PRINCIPAL),
      maxSessions: optionalNumber(env.MAX_SESSIONS),
    }),
  });
}
