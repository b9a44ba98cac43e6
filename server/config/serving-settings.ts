/**
 * Where the coordinator serves from and keeps its state: the data folder, the address it listens on,
 * the database, the receipt key and the queue log's mirror. Every default works on a machine with
 * nothing but Node: SQLite in the data folder, an embedded verifier process, loopback only.
 */
import path from 'node:path';
import { z } from 'zod';
import { QUEUE_LOG_FILE } from '../../core/queue-log/queue-log-entry.ts';
import { settingsFragment } from './setting.ts';

export const SERVING_SETTINGS = settingsFragment(
  {
    CEREMONY_DATA: {
      group: 'serving',
      schema: z.string().default('ceremony-data'),
      doc: 'the data folder: ceremony.json, circuits, chains, transcript (state/ and uploads/ are added)',
      flag: '--data',
    },
    HOST: {
      group: 'serving',
      schema: z.string().default('127.0.0.1'),
      doc: 'the interface to listen on; loopback by default: put a TLS proxy in front for the public',
      flag: '--host',
    },
    PORT: {
      group: 'serving',
      schema: z.coerce.number().int().min(0).max(65535).default(8080),
      doc: 'the port to listen on',
      flag: '--port',
    },
    PUBLIC_URL: {
      group: 'serving',
      schema: z.string().url().optional(),
      doc: 'the public base URL: OAuth callback, links, CORS origin, HSTS when https',
      unset: 'http://HOST:PORT',
    },
    REDIS_URL: {
      group: 'serving',
      schema: z.string().url().optional(),
      doc: 'verification by BullMQ workers (`ceremony worker`), and rate limits shared in Redis',
      unset: 'none: one embedded verifier process',
    },
    DATABASE_FILE: {
      group: 'serving',
      schema: z.string().optional(),
      doc: 'the SQLite database',
      unset: 'DATA/state/coordinator.sqlite',
    },
    RECEIPT_KEY_FILE: {
      group: 'serving',
      schema: z.string().optional(),
      doc: 'the Ed25519 key signing receipts, created on first start',
      unset: 'DATA/state/receipt-key.pem',
    },
    QUEUE_LOG_FILE: {
      group: 'serving',
      schema: z.string().optional(),
      doc:
        "the public queue log's file, a mirror of the database's log that `ceremony publish` copies; one " +
        'coordinator serves a data folder (a second is refused, ceremony.already_served), so leave it',
      unset: 'DATA/transcript/queue-log.jsonl',
    },
  },
  (e) => {
    const dataDir = path.resolve(e.CEREMONY_DATA);
    const host = e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST;
    return {
      dataDir,
      host: e.HOST,
      port: e.PORT,
      publicUrl: (e.PUBLIC_URL ?? `http://${host}:${e.PORT}`).replace(/\/$/, ''),
      redisUrl: e.REDIS_URL,
      databaseFile: path.resolve(e.DATABASE_FILE ?? path.join(dataDir, 'state', 'coordinator.sqlite')),
      receiptKeyFile: path.resolve(e.RECEIPT_KEY_FILE ?? path.join(dataDir, 'state', 'receipt-key.pem')),
      queueLogFile: path.resolve(e.QUEUE_LOG_FILE ?? path.join(dataDir, QUEUE_LOG_FILE)),
    };
  },
);
