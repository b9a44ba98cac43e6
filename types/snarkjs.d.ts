// The parts of snarkjs (which ships no types) that this project calls.
declare module 'snarkjs' {
  export interface Logger {
    debug(message: string): void;
    info(message: string): void;
    warn(message: string): void;
    error(message: string): void;
  }
  /** An in-memory "file": snarkjs reads `data`, and fills `data` when writing. */
  export interface MemFile {
    type: 'mem';
    data?: Uint8Array;
    /** Bytes to allocate when snarkjs creates the file (fastfile's default is 1 MiB, grown by ×1.1). */
    initialSize?: number;
  }
  /** A Groth16 verification key as `zKey.exportVerificationKey` gives it: points as decimal strings. */
  export interface VerificationKey {
    protocol: string;
    curve: string;
    nPublic: number;
    vk_alpha_1: string[];
    vk_beta_2: string[][];
    vk_gamma_2: string[][];
    vk_delta_2: string[][];
    IC: string[][];
    [key: string]: unknown;
  }
  export namespace curves {
    function getCurveFromName(name: string, options?: { singleThread?: boolean }): Promise<unknown>;
  }
  export namespace zKey {
    function newZKey(r1csPath: string, ptauPath: string, zkeyPath: string, logger?: Logger): Promise<unknown>;
    function contribute(
      oldPath: string | Uint8Array,
      newPath: string | MemFile,
      name: string,
      entropy: string,
      logger?: Logger,
    ): Promise<Uint8Array>;
    function beacon(
      oldPath: string | Uint8Array,
      newPath: string | MemFile,
      name: string,
      beaconHex: string,
      numIterationsExp: number,
      logger?: Logger,
    ): Promise<Uint8Array | false>;
    function verifyFromInit(initPath: string, ptauPath: string, zkeyPath: string, logger?: Logger): Promise<boolean>;
    function verifyFromR1cs(r1csPath: string, ptauPath: string, zkeyPath: string, logger?: Logger): Promise<boolean>;
    function exportVerificationKey(zkeyPath: string, logger?: Logger): Promise<VerificationKey>;
    function exportSolidityVerifier(zkeyPath: string, templates: { groth16: string }, logger?: Logger): Promise<string>;
  }
  export namespace powersOfTau {
    function newAccumulator(curve: unknown, power: number, path: string, logger?: Logger): Promise<unknown>;
    function beacon(
      oldPath: string,
      newPath: string,
      name: string,
      beaconHex: string,
      numIterationsExp: number,
      logger?: Logger,
    ): Promise<unknown>;
    function preparePhase2(oldPath: string, newPath: string, logger?: Logger): Promise<unknown>;
    function verify(ptauPath: string, logger?: Logger): Promise<boolean>;
  }
  export namespace groth16 {
    function fullProve(
      input: Record<string, unknown>,
      wasmPath: string,
      zkeyPath: string,
      logger?: Logger,
    ): Promise<{ proof: unknown; publicSignals: string[] }>;
    function verify(vkey: unknown, publicSignals: string[], proof: unknown, logger?: Logger): Promise<boolean>;
  }
}

// ffjavascript's bn128, typed once for every caller: the members this project uses, each as
// ffjavascript 0.3 defines it (its curve, groups and field are plain objects built at run time).
// The index signatures keep the rest reachable, as unknown, for the few places that patch the curve.
declare module 'ffjavascript' {
  /** A group of the curve (G1 or G2); points are ffjavascript's Montgomery-form byte arrays. */
  export interface CurveGroup {
    g: Uint8Array;
    F: { n8: number };
    zero: Uint8Array;
    fromRprLEM(buff: Uint8Array, offset?: number): Uint8Array;
    toRprUncompressed(buff: Uint8Array, offset: number, point: Uint8Array): void;
    toRprLEM(buff: Uint8Array, offset: number, point: Uint8Array): void;
    toAffine(point: Uint8Array): Uint8Array;
    eq(a: Uint8Array, b: Uint8Array): boolean;
    isZero(point: Uint8Array): boolean;
    /** On the curve (not a subgroup check: G2's cofactor is large). */
    isValid(point: Uint8Array): boolean;
    neg(point: Uint8Array): Uint8Array;
    add(a: Uint8Array, b: Uint8Array): Uint8Array;
    double(point: Uint8Array): Uint8Array;
    timesFr(point: Uint8Array, scalar: Uint8Array): Uint8Array;
    timesScalar(point: Uint8Array, scalar: number | bigint | Uint8Array): Uint8Array;
    /** A point drawn from one of snarkjs's ChaCha streams (core/crypto/snarkjs-rng.ts). */
    fromRng(rng: unknown): Uint8Array;
    multiExpAffine(bases: Uint8Array, scalars: Uint8Array, logger?: unknown, name?: string): Promise<Uint8Array>;
    /** Points of a file (little-endian Montgomery) to uncompressed or compressed big-endian form, on the threads. */
    batchLEMtoU(buff: Uint8Array): Promise<Uint8Array>;
    batchLEMtoC(buff: Uint8Array): Promise<Uint8Array>;
    toObject(point: Uint8Array): bigint[] | bigint[][];
    fromObject(obj: unknown): Uint8Array;
    [key: string]: unknown;
  }
  /** The scalar field Fr (elements are 32-byte Montgomery-form arrays). */
  export interface ScalarField {
    n8: number;
    one: Uint8Array;
    /** w[k]: a primitive 2^k-th root of unity. */
    w: Uint8Array[];
    e(value: bigint | number): Uint8Array;
    add(a: Uint8Array, b: Uint8Array): Uint8Array;
    sub(a: Uint8Array, b: Uint8Array): Uint8Array;
    mul(a: Uint8Array, b: Uint8Array): Uint8Array;
    square(a: Uint8Array): Uint8Array;
    inv(a: Uint8Array): Uint8Array;
    exp(a: Uint8Array, b: Uint8Array | bigint | number): Uint8Array;
    isZero(a: Uint8Array): boolean;
    /** The element in standard form. */
    toObject(a: Uint8Array): bigint;
    fromRng(rng: unknown): Uint8Array;
    batchToMontgomery(buff: Uint8Array): Promise<Uint8Array>;
    batchFromMontgomery(buff: Uint8Array): Promise<Uint8Array>;
    ifft(buff: Uint8Array): Promise<Uint8Array>;
    [key: string]: unknown;
  }
  /** The curve's WebAssembly instance on the main thread, for synchronous calls into it. */
  export interface ThreadManager {
    memory: WebAssembly.Memory;
    instance: { exports: Record<string, unknown> };
    startSyncOp(): void;
    endSyncOp(): void;
    alloc(length: number): number;
    /** Runs one task (the threads' own command list, ffjavascript's threadman_thread.js) on a thread. */
    queueAction(task: unknown[]): Promise<Uint8Array[]>;
    [key: string]: unknown;
  }
  export interface Bn128Curve {
    G1: CurveGroup;
    G2: CurveGroup;
    Fr: ScalarField;
    tm: ThreadManager;
    q: bigint;
    r: bigint;
    pairingEq(...points: Uint8Array[]): Promise<boolean>;
    terminate(): Promise<void>;
    [key: string]: unknown;
  }
  export function buildBn128(singleThread?: boolean): Promise<Bn128Curve>;
  export class F1Field {
    constructor(prime: bigint);
  }
  export const ChaCha: new (seed: number[]) => unknown;
}

declare module 'r1csfile' {
  export interface R1csHeader {
    n8: number;
    prime: bigint;
    nVars: number;
    nOutputs: number;
    nPubInputs: number;
    nPrvInputs: number;
    nLabels: number;
    nConstraints: number;
  }
  export function readR1csHeader(fd: unknown, sections: unknown, options?: unknown): Promise<R1csHeader>;
}

declare module '@iden3/binfileutils' {
  export function readBinFile(
    path: string,
    type: string,
    maxVersion: number,
    cacheSize?: number,
    pageSize?: number,
  ): Promise<{ fd: { close(): Promise<void> }; sections: unknown }>;
}
