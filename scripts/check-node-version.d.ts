/** Types of scripts/check-node-version.js (plain JavaScript: it runs on any old Node). */
export function requiredNodeMajor(engines: unknown): number;
export function nodeVersionProblem(version: string, required: number): string | undefined;
