/**
 * The coordinator's SQLite database (better-sqlite3): the source of truth for ceremony phase,
 * contributors, sessions, queues, turns and contribution state. WAL mode, foreign keys on.
 * Each module owns its tables and brings its own ordered migrations (see applyMigrations), so
 * modules can evolve their schema without touching each other's.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

export type Db = Database.Database;

export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    module TEXT NOT NULL,
    version INTEGER NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (module, version)
  )`);
  return db;
}

/**
 * Applies the migrations of one module that are not applied yet, each in its own transaction.
 * `migrations[i]` is version i + 1; never edit or reorder a released migration, append a new one.
 */
export function applyMigrations(db: Db, module: string, migrations: readonly string[]): void {
  const applied = new Set(
    (
      db.prepare('SELECT version FROM schema_migrations WHERE module = ?').all(module) as Array<{ version: number }>
    ).map((r) => r.version),
  );
  migrations.forEach((sql, index) => {
    const version = index + 1;
    if (applied.has(version)) return;
    db.transaction(() => {
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (module, version, applied_at) VALUES (?, ?, ?)').run(
        module,
        version,
        new Date().toISOString(),
      );
    })();
  });
}
