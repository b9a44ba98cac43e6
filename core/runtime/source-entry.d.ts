/** Types of source-entry.js (plain JavaScript: the sources' thread and process entries run it), for the tests. */
export function importCompiledOrSource(sourceUrl: URL, root?: string): Promise<unknown>;
