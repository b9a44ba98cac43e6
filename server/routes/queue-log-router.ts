/**
 * `GET /api/queue-log`: the public queue log (core/queue-log/queue-log-entry.ts), a page at a time,
 * rate-limited per client address. Oldest first from `after` (an auditor reading it whole, to
 * check its hash chain), or newest first before `before` (the public page); filtered by circuit,
 * type of step, or contributor (a public id, or part of a name). A filtered page is a selection,
 * not a stretch of the chain: its hashes are checked only over an unfiltered read.
 */
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { QUEUE_LOG_ENTRY_TYPES } from '../../core/queue-log/queue-log-entry.ts';
import type { QueueLogStore } from '../lobby/queue-log-store.ts';

/** The most entries one page holds: about 300 kB of JSON. */
const QUEUE_LOG_PAGE_MAX = 1000;
const QUEUE_LOG_PAGE_DEFAULT = 200;

const seq = z.coerce.number().int().min(-1).max(Number.MAX_SAFE_INTEGER);
const query = z
  .object({
    after: seq.optional(),
    before: seq.optional(),
    limit: z.coerce.number().int().min(1).max(QUEUE_LOG_PAGE_MAX).default(QUEUE_LOG_PAGE_DEFAULT),
    circuit: z.string().min(1).max(100).optional(),
    type: z.enum(QUEUE_LOG_ENTRY_TYPES).optional(),
    contributor: z.string().min(1).max(100).optional(),
  })
  .strict();

export interface QueueLogRouterDeps {
  config: CeremonyConfig;
  queueLog: QueueLogStore;
  /** Per-address limit (rate-limits.ts); none in tests that do not exercise it. */
  rateLimit?: RequestHandler;
}

export function createQueueLogRouter(deps: QueueLogRouterDeps): Router {
  const router = Router();
  const limits: RequestHandler[] = deps.rateLimit ? [deps.rateLimit] : [];
  router.get('/api/queue-log', ...limits, (req, res) => {
    const parsed = query.safeParse(req.query);
    if (!parsed.success)
      throw new CoordinatorError(
        'request.invalid',
        'queue-log query: ' +
          parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ') +
          ` (after, before: an entry's seq; limit: 1 to ${QUEUE_LOG_PAGE_MAX}; circuit; type; contributor)`,
      );
    const { after, before, limit, circuit, type, contributor } = parsed.data;
    if (after !== undefined && before !== undefined)
      throw new CoordinatorError('request.invalid', 'give `after` (oldest first) or `before` (newest first), not both');
    const page = deps.queueLog.page({
      limit,
      ...(after !== undefined ? { after } : {}),
      ...(before !== undefined ? { before } : {}),
      ...(circuit !== undefined ? { circuit } : {}),
      ...(type !== undefined ? { type } : {}),
      ...(contributor !== undefined ? { search: contributor } : {}),
    });
    res.json({ ceremony: deps.config.id, total: page.total, entries: page.entries });
  });
  return router;
}
