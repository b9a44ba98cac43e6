/**
 * The published fee schedule: the values the service document states, kept in one JSON file
 * shipped with the project (published-fees.json next to this module) and replaceable with
 * `ceremony check-fees --schedule FILE`. Both go through the same schema.
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { readCheckedJsonFile } from './read-checked-json-file.ts';

/** Whole amounts only, as a safe JSON integer or a decimal digit string (wei exceed 2^53). */
const wholeAmount = z
  .union(
    [
      z.number().int().nonnegative().refine(Number.isSafeInteger, 'an integer beyond 2^53 must be written as a string'),
      z.string().regex(/^\d{1,78}$/, 'a whole number of base units, in decimal digits'),
    ],
    {
      // zod's own union message is only "Invalid input".
      errorMap: (_issue, ctx) => ({
        message: ctx.data === undefined ? 'Required' : 'a whole number: a JSON integer or a string of decimal digits',
      }),
    },
  )
  .transform((value) => BigInt(value));

const scheduleSchema = z
  .object({
    /** Where the values come from; not compared. */
    source: z.string().max(1000).optional(),
    /** `withdrawFeeBps()` of every pool. */
    poolWithdrawFeeBps: wholeAmount,
    /** `GET {relayer}/quote`, in USDC base units (6 decimals). */
    relayFeeUsdcBaseUnits: wholeAmount,
    /** `feeUsdc` of `GET {relayer}/gas/quote`, in USDC base units. */
    gasPurchaseFeeUsdcBaseUnits: wholeAmount,
    /** `dropWei` of `GET {relayer}/gas/quote`. */
    gasPurchaseDropWei: wholeAmount,
  })
  .strict();

export type FeeSchedule = z.output<typeof scheduleSchema>;

const PUBLISHED_FEES_PATH = fileURLToPath(new URL('./published-fees.json', import.meta.url));

/** Reads the shipped schedule, or the one at `path`; a missing or malformed file is an input error. */
export async function readFeeSchedule(path: string = PUBLISHED_FEES_PATH): Promise<FeeSchedule> {
  return readCheckedJsonFile(path, 'fee schedule', scheduleSchema);
}
