/**
 * Which engine makes the browser's contribution: the G1 kernel on a pool of Web Workers (one per
 * logical core, navigator.hardwareConcurrency), or, where the kernel cannot run (no WebAssembly,
 * a WebAssembly that refuses the kernel's module, no Workers), snarkjs alone in its worker.
 */
export interface ContributionEngine {
  engine: 'kernel' | 'snarkjs';
  /** Kernel workers (0 with snarkjs). */
  workers: number;
  /** Why snarkjs was chosen, in words for the page. */
  reason?: string;
}

export interface EngineEnvironment {
  webAssembly: { validate(bytes: Uint8Array<ArrayBuffer>): boolean } | undefined;
  workerAvailable: boolean;
  hardwareConcurrency: number | undefined;
}

/** More workers than this only add copies of the key's slices; no contributor machine gains. */
const MAX_WORKERS = 16;

export function contributionEngine(
  env: EngineEnvironment,
  kernelBytes: () => Uint8Array<ArrayBuffer>,
): ContributionEngine {
  if (!env.workerAvailable) return { engine: 'snarkjs', workers: 0, reason: 'this browser has no Web Workers' };
  if (!env.webAssembly) return { engine: 'snarkjs', workers: 0, reason: 'this browser has no WebAssembly' };
  let valid = false;
  try {
    valid = env.webAssembly.validate(kernelBytes());
  } catch {
    valid = false;
  }
  if (!valid) return { engine: 'snarkjs', workers: 0, reason: 'this browser’s WebAssembly cannot run the fast kernel' };
  const reported = env.hardwareConcurrency;
  const cores = typeof reported === 'number' && Number.isInteger(reported) && reported > 0 ? reported : 1;
  return { engine: 'kernel', workers: Math.min(cores, MAX_WORKERS) };
}

/** The engine for this page. */
export function pageContributionEngine(kernelBytes: () => Uint8Array<ArrayBuffer>): ContributionEngine {
  return contributionEngine(
    {
      webAssembly: typeof WebAssembly === 'object' ? WebAssembly : undefined,
      workerAvailable: typeof Worker === 'function',
      hardwareConcurrency: typeof navigator === 'object' ? navigator.hardwareConcurrency : undefined,
    },
    kernelBytes,
  );
}
