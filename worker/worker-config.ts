/**
 * Configuration of a `ceremony worker` process, read from the environment once at start-up (and
 * overridden by command-line options), validated, and frozen. Documented defaults:
 *
 *   REDIS_URL                   required (or --redis)
 *   VERIFICATION_QUEUE          ceremony-verification   the one queue `ceremony serve` fills (it has no
 *                               setting for another): other names are for tests' own dispatchers
 *   WORKER_CONCURRENCY          1       (or --concurrency)
 *   WORKER_LOCK_DURATION_MS     30000   a crashed worker's job is retried after this long
 *   WORKER_STALLED_INTERVAL_MS  30000   how often this worker looks for such jobs
 *   WORKER_NAME                 <hostname>:<pid>
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { CoordinatorError } from '../core/errors.ts';
import { DEFAULT_VERIFICATION_QUEUE } from '../core/verifier-contract/verifier-contract.ts';

export interface WorkerConfig {
  readonly redisUrl: string;
  readonly queueName: string;
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly name: string;
}

const integerString = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const workerEnvSchema = z.object({
  REDIS_URL: z
    .string({ required_error: 'is required (or pass --redis URL)' })
    .url()
    .refine((url) => /^rediss?:$/.test(new URL(url).protocol), { message: 'must be a redis:// or rediss:// URL' }),
  VERIFICATION_QUEUE: z
    .string()
    .min(1)
    .regex(/^[^:]+$/, 'must not contain ":"')
    .default(DEFAULT_VERIFICATION_QUEUE),
  WORKER_CONCURRENCY: integerString(1, 64).default(1),
  WORKER_LOCK_DURATION_MS: integerString(1000, 3_600_000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: integerString(500, 3_600_000).default(30_000),
  WORKER_NAME: z.string().min(1).optional(),
});

export interface WorkerConfigOverrides {
  redisUrl?: string;
  concurrency?: string | number;
}

/** Reads the worker's configuration; refuses with `config.invalid`, naming every bad variable. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv, overrides: WorkerConfigOverrides = {}): WorkerConfig {
  const merged = {
    ...env,
    ...(overrides.redisUrl !== undefined ? { REDIS_URL: overrides.redisUrl } : {}),
    ...(overrides.concurrency !== undefined ? { WORKER_CONCURRENCY: String(overrides.concurrency) } : {}),
  };
  const parsed = workerEnvSchema.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ');
    throw new CoordinatorError('config.invalid', `worker configuration: ${problems}`);
  }
  const c = parsed.data;
  return Object.freeze({
    redisUrl: c.REDIS_URL,
    queueName: c.VERIFICATION_QUEUE,
    concurrency: c.WORKER_CONCURRENCY,
    lockDurationMs: c.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: c.WORKER_STALLED_INTERVAL_MS,
    name: c.WORKER_NAME ?? `${hostname()}:${process.pid}`,
  });
}
