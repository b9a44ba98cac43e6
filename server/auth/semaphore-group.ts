/**
 * The Semaphore group this ceremony accepts, and the window of its recent roots. A proof is made
 * against the root the browser saw; when the member list changes, proofs against the previous
 * `rootWindow` roots stay acceptable so a contributor mid-sign-in is not refused. Roots are kept
 * in SQLite, so the window survives a restart.
 */
import { Group } from '@semaphore-protocol/group';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';

export class SemaphoreGroup {
  private group: Group;
  private memberList: string[];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    members: readonly string[],
    private readonly rootWindow: number,
  ) {
    migrateAuthTables(db);
    this.memberList = [...members];
    this.group = new Group(this.memberList.map((m) => BigInt(m)));
    this.recordRoot();
  }

  /** Replaces the member list (decimal commitments); the previous root joins the window. */
  updateGroupMembers(members: readonly string[]): void {
    this.memberList = [...members];
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

  /** The current root, or one of the `rootWindow` roots before it. */
  isAcceptedRoot(root: string): boolean {
    if (root === this.root) return true;
    const recent = this.db
      .prepare('SELECT root FROM auth_semaphore_roots ORDER BY seq DESC LIMIT ?')
      .all(this.rootWindow + 1) as Array<{ root: string }>;
    return recent.some((row) => row.root === root);
  }

  private recordRoot(): void {
    const latest = this.db.prepare('SELECT root FROM auth_semaphore_roots ORDER BY seq DESC LIMIT 1').get() as { root: string } | undefined;
    if (latest?.root === this.root) return;
    this.db.prepare('INSERT INTO auth_semaphore_roots (root, added_at) VALUES (?, ?)').run(this.root, this.clock.now());
  }
}
