/**
 * TARGETS.json of `ceremony check-fees`: where to read the live fees, i.e. one pool per network
 * and the relayer's base URL (e.g. `{base_url}/relayer-mainnet`). Validated whole before anything
 * is read, so a typo is a usage error (exit 2), never a MISMATCH.
 */
import type { Address } from 'viem';
import { isEvmAddress } from '../deployment/evm-address.ts';
import { z } from 'zod';
import { readCheckedJsonFile } from './read-checked-json-file.ts';

const httpUrl = z
  .string()
  .max(2048)
  .refine((text) => {
    try {
      const url = new URL(text);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'an http:// or https:// URL');

const poolSchema = z
  .object({
    /** Printed on the pool's line, e.g. `Network A`. */
    name: z
      .string()
      .min(1)
      .max(80)
      .regex(/^[^\p{Cc}]+$/u, 'a name without control characters'),
    rpcUrl: httpUrl,
    address: z
      .string()
      .refine(
        (text) => isEvmAddress(text),
        'an address: 0x and 40 hex digits, with a valid EIP-55 checksum if mixed case',
      )
      .transform((text) => text as Address),
  })
  .strict();

const targetsSchema = z
  .object({
    pools: z.array(poolSchema).min(1, 'at least one pool').max(32),
    /** The command appends `/quote` and `/gas/quote`. */
    relayer: httpUrl.refine((text) => {
      const url = new URL(text);
      return url.search === '' && url.hash === '';
    }, 'a base URL without query or fragment (the command appends /quote and /gas/quote)'),
  })
  .strict()
  .superRefine((targets, ctx) => {
    const seen = new Set<string>();
    targets.pools.forEach((pool, index) => {
      if (seen.has(pool.name))
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['pools', index, 'name'],
          message: `duplicate pool name "${pool.name}"`,
        });
      seen.add(pool.name);
    });
  });

export type FeeTargets = z.output<typeof targetsSchema>;
export type FeePoolTarget = FeeTargets['pools'][number];

export async function readFeeTargets(path: string): Promise<FeeTargets> {
  return readCheckedJsonFile(path, 'targets', targetsSchema);
}

/** `base` + `/quote`, whether or not the base ends with a slash. */
export function relayerEndpoint(base: string, path: '/quote' | '/gas/quote'): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
