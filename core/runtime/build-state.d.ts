/** Types of build-state.js (plain JavaScript: bin/ runs it before anything is compiled), for the tests. */
export interface BuildPart {
  /** Output folder, repo-relative. */
  out: string;
  /** Written last by a successful build; its mtime is the build's start. */
  stamp: string;
  /** The build's configuration file: without it the part has no sources to build from. */
  config: string;
  /** Files and folders whose change makes the part stale. */
  sources: string[];
  /** The build's own record of the files it read (the browser app's module graph), if it keeps one. */
  inputs?: string;
}
export type BuildState = 'current' | 'stale' | 'missing' | 'no-sources';
export const REPO_ROOT: string;
export const PARTS: { dist: BuildPart; web: BuildPart & { inputs: string } };
export function buildState(part: keyof typeof PARTS, root?: string): BuildState;
