/**
 * The memo folders `ceremony audit` keeps by default (core/audit/verified-ptau-memo.ts,
 * verified-initial-key-memo.ts), in this test process's private XDG_CACHE_HOME (tests/setup.mjs),
 * which the commands it runs inherit. An audit in the test's process given them checks a ptau's
 * sections and a contribution 0 once for the whole file, as the CLI does from one run to the next:
 * a ptau or a contribution 0 with other bytes has another hash, and is checked anew.
 */
import { defaultInitialKeyMemoDir } from '../../core/audit/verified-initial-key-memo.ts';
import { defaultPtauMemoDir } from '../../core/audit/verified-ptau-memo.ts';

export function processAuditMemos(): { ptauMemoDir: string; initialKeyMemoDir: string } {
  return { ptauMemoDir: defaultPtauMemoDir(), initialKeyMemoDir: defaultInitialKeyMemoDir() };
}
