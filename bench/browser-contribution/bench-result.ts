/**
 * What the benchmark page (bench-page.ts, DOM) hands back to bench/browser-contribution.ts (Node).
 * Its own file, free of DOM and Node types, so both TypeScript projects can import it.
 */

export interface BrowserContributionResult {
  /** fetch of the head until its bytes are in memory (localhost: a floor, not a network figure). */
  downloadMs: number;
  /** computeContribution alone: worker start, curve set-up, contribution, bytes back on the page. */
  computeMs: number;
  /** The contribution hash the app would show the contributor (hex). */
  hash: string;
  outputBytes: number;
  /** How many curve threads snarkjs starts in the page (ffjavascript sizes its pool by it). */
  hardwareConcurrency: number;
}

/** The page's global, as page.evaluate sees it. */
export interface BenchPageGlobal {
  /**
   * Downloads the head at zkeyUrl, contributes on it with the app's computeContribution, then PUTs
   * the new key to outputUrl so Node can verify it as the next link (outside both timings).
   */
  benchContribute(zkeyUrl: string, outputUrl: string): Promise<BrowserContributionResult>;
}
