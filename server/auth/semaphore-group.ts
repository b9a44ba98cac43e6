/**
 * The Semaphore group this ceremony accepts, and which of its past roots a proof may still use.
 * A proof is made against the root the browser saw; when the member list changes, a proof against
 * one of the previous `rootWindow` roots stays acceptable for `rootDurationMs` after that root was
 * replaced (like Semaphore's `merkleTreeDuration`), so a contributor mid-sign-in is not refused.
 * A removal is different: it makes every earlier root unacceptable at once, since each of them
 * still proves the removed member's membership. Roots and the latest member list are kept in
 * SQLite, so neither the window nor a removal is forgotten by a restart (a restart with a shorter
 * member list is itself a removal).
 */
import { Group } from '@semaphore-protocol/group';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';

/**
 * `accepted`: the current root or a recent one; `expired`: a past root no longer accepted; `unknown`: never this
 * group's.
 */
export type RootStatus = 'accepted' | 'expired' | 'unknown';

export interface SemaphoreGroupOptions {
  /** How many roots before the current one may still be used. */
  rootWindow: number;
  /** How long a replaced root stays usable, in ms (unless a member was removed since). */
  rootDurationMs: number;
}

interface RootRow {
  seq: number;
  root: string;
  superseded_at: number | null;
  revoked_at: number | null;
}

export class SemaphoreGroup {
  private group: Group;
  private memberList: string[];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    members: readonly string[],
    private readonly options: SemaphoreGroupOptions,
  ) {
    migrateAuthTables(db);
    this.memberList = members.map(normalise);
    this.group = new Group(this.memberList.map((m) => BigInt(m)));
    this.recordRoot();
  }

  /** Replaces the member list (decimal commitments); see the module comment for what happens to the previous root. */
  updateGroupMembers(members: readonly string[]): void {
    this.memberList = members.map(normalise);
    this.group = new Group(this.memberList.map((m) => BigInt(m)));
    this.recordRoot();
  }

  get members(): readonly string[] {
    return this.memberList;
  }

  /** Decimal root of the current member list. */
  get root(): string {
    return this.group.root.toString();
  }

  /**
   * The current root, or one of the `rootWindow` roots before it, replaced less than `rootDurationMs` ago and not
   * revoked.
   */
  isAcceptedRoot(root: string): boolean {
    return this.rootStatus(root) === 'accepted';
  }

  rootStatus(root: string): RootStatus {
    if (root === this.root) return 'accepted';
    const recent = this.db
      .prepare('SELECT seq, root, superseded_at, revoked_at FROM auth_semaphore_roots ORDER BY seq DESC LIMIT ?')
      .all(this.options.rootWindow + 1) as RootRow[];
    // The newest row of that root: a member list can come back to an earlier root.
    const row = recent.find((r) => r.root === root);
    if (!row) {
      return this.db.prepare('SELECT 1 FROM auth_semaphore_roots WHERE root = ?').get(root) ? 'expired' : 'unknown';
    }
    if (row.revoked_at !== null) return 'expired';
    if (row.superseded_at !== null && this.clock.now() - row.superseded_at > this.options.rootDurationMs)
      return 'expired';
    return 'accepted';
  }

  private recordRoot(): void {
    this.db
      .transaction(() => {
        const root = this.root;
        const latest = this.db.prepare('SELECT seq, root FROM auth_semaphore_roots ORDER BY seq DESC LIMIT 1').get() as
          Pick<RootRow, 'seq' | 'root'> | undefined;
        const stored = (
          this.db.prepare('SELECT commitment FROM auth_semaphore_members').all() as Array<{ commitment: string }>
        ).map((r) => r.commitment);
        if (latest?.root === root && stored.length > 0) return;
        const now = this.clock.now();
        if (latest && latest.root !== root) {
          const current = new Set(this.memberList);
          // A database from before members were stored cannot show there was no removal: assume one.
          const removed = stored.length === 0 || stored.some((m) => !current.has(m));
          this.db.prepare('UPDATE auth_semaphore_roots SET superseded_at = ? WHERE superseded_at IS NULL').run(now);
          if (removed)
            this.db.prepare('UPDATE auth_semaphore_roots SET revoked_at = ? WHERE revoked_at IS NULL').run(now);
        }
        if (latest?.root !== root)
          this.db.prepare('INSERT INTO auth_semaphore_roots (root, added_at) VALUES (?, ?)').run(root, now);
        this.db.prepare('DELETE FROM auth_semaphore_members').run();
        const insert = this.db.prepare('INSERT OR IGNORE INTO auth_semaphore_members (commitment) VALUES (?)');
        for (const member of this.memberList) insert.run(member);
      })
      .immediate();
  }
}

function normalise(commitment: string): string {
  return BigInt(commitment).toString();
}
