/**
 * The account minimums a GitHub account must meet at each sign-in, checked against the JSON of
 * GitHub's `/user` endpoint. A refusal names every minimum that failed, with the numbers.
 */
import { CoordinatorError } from '../../core/errors.ts';
import type { AuthConfig } from './auth-config.ts';

export type GithubMinimums = NonNullable<AuthConfig['github']>['minimums'];

export interface MinimumShortfall {
  minimum: 'followers' | 'following' | 'publicRepos' | 'accountAgeDays';
  actual: number;
  required: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Throws `auth.below_minimum` naming each failed minimum, or `auth.github_failed` on a profile without the fields. */
export function checkGithubMinimums(profileJson: unknown, minimums: GithubMinimums, nowMs: number): void {
  const json = (profileJson ?? {}) as Record<string, unknown>;
  const followers = json.followers;
  const following = json.following;
  const publicRepos = json.public_repos;
  const createdAt = typeof json.created_at === 'string' ? Date.parse(json.created_at) : Number.NaN;
  if (!isCount(followers) || !isCount(following) || !isCount(publicRepos) || Number.isNaN(createdAt)) {
    throw new CoordinatorError(
      'auth.github_failed',
      'GitHub profile lacks followers, following, public_repos or created_at',
    );
  }
  const ageDays = Math.floor((nowMs - createdAt) / DAY_MS);
  const shortfalls: MinimumShortfall[] = [];
  if (followers < minimums.followers)
    shortfalls.push({ minimum: 'followers', actual: followers, required: minimums.followers });
  if (following < minimums.following)
    shortfalls.push({ minimum: 'following', actual: following, required: minimums.following });
  if (publicRepos < minimums.publicRepos)
    shortfalls.push({ minimum: 'publicRepos', actual: publicRepos, required: minimums.publicRepos });
  if (ageDays < minimums.accountAgeDays)
    shortfalls.push({ minimum: 'accountAgeDays', actual: ageDays, required: minimums.accountAgeDays });
  if (shortfalls.length === 0) return;
  const list = shortfalls.map((s) => `${s.minimum} ${s.actual} < ${s.required}`).join(', ');
  throw new CoordinatorError('auth.below_minimum', `GitHub account below the ceremony's minimums: ${list}`, {
    shortfalls,
  });
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
