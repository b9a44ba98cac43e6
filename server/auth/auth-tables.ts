/**
 * The tables the `auth` module owns (sessions, OAuth states, Semaphore challenges, nullifiers and
 * group roots) and their migrations. Append new migrations; never edit a released one.
 *
 * Migration 2: a root records when a newer one replaced it (superseded_at: the start of its grace
 * period) and when a member removal made it unacceptable (revoked_at); the member list of the
 * latest root is kept, so a restart with a shorter list is recognised as a removal; sessions are
 * indexed by principal (per-principal cap).
 *
 * Migration 3: GitHub device-flow sign-ins in progress (`ceremony contribute --github`): the
 * device code GitHub issued, under the sha256 of the opaque handle the client polls with, its
 * polling interval and expiry.
 *
 * Migration 4: the sha256 of the client address that started each device sign-in, so that one
 * address can hold only a few at once (each one is a poll of GitHub every interval).
 *
 * Migration 5: the same for OAuth states and Semaphore challenges, so that a few addresses cannot
 * fill their tables (and refuse every other sign-in) within the rate limit.
 */
import { applyMigrations, type Db } from '../store/database.ts';

const AUTH_MIGRATIONS: readonly string[] = [
  `CREATE TABLE auth_sessions (
     token_hash TEXT PRIMARY KEY,
     principal_id TEXT NOT NULL,
     principal_kind TEXT NOT NULL,
     display_name TEXT NOT NULL,
     coordinator INTEGER NOT NULL,
     csrf_token TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX auth_sessions_expires_at ON auth_sessions (expires_at);

   CREATE TABLE auth_oauth_states (
     state TEXT PRIMARY KEY,
     expires_at INTEGER NOT NULL
   );

   CREATE TABLE auth_semaphore_challenges (
     challenge TEXT PRIMARY KEY,
     expires_at INTEGER NOT NULL,
     consumed_at INTEGER
   );

   CREATE TABLE auth_semaphore_nullifiers (
     scope TEXT NOT NULL,
     nullifier TEXT NOT NULL,
     used_at INTEGER NOT NULL,
     PRIMARY KEY (scope, nullifier)
   );

   CREATE TABLE auth_semaphore_roots (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     root TEXT NOT NULL,
     added_at INTEGER NOT NULL
   );`,
  `ALTER TABLE auth_semaphore_roots ADD COLUMN superseded_at INTEGER;
   ALTER TABLE auth_semaphore_roots ADD COLUMN revoked_at INTEGER;
   CREATE TABLE auth_semaphore_members (
     commitment TEXT PRIMARY KEY
   );
   CREATE INDEX auth_sessions_principal ON auth_sessions (principal_id, created_at);
   CREATE INDEX auth_semaphore_challenges_expires_at ON auth_semaphore_challenges (expires_at);`,
  `CREATE TABLE auth_github_devices (
     handle_hash TEXT PRIMARY KEY,
     device_code TEXT NOT NULL,
     interval_ms INTEGER NOT NULL,
     next_poll_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX auth_github_devices_expires_at ON auth_github_devices (expires_at);`,
  `ALTER TABLE auth_github_devices ADD COLUMN client_hash TEXT NOT NULL DEFAULT '';
   CREATE INDEX auth_github_devices_client ON auth_github_devices (client_hash, expires_at);`,
  `ALTER TABLE auth_oauth_states ADD COLUMN client_hash TEXT NOT NULL DEFAULT '';
   CREATE INDEX auth_oauth_states_client ON auth_oauth_states (client_hash, expires_at);
   ALTER TABLE auth_semaphore_challenges ADD COLUMN client_hash TEXT NOT NULL DEFAULT '';
   CREATE INDEX auth_semaphore_challenges_client ON auth_semaphore_challenges (client_hash, expires_at);`,
];

export function migrateAuthTables(db: Db): void {
  applyMigrations(db, 'auth', AUTH_MIGRATIONS);
}
