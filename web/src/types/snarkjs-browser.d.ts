// The part of snarkjs's browser build (node_modules/snarkjs/build/browser.esm.js) the web app calls.
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
  export namespace curves {
    /** ffjavascript's curve, cached per page: the one zKey.contribute then uses. */
    function getCurveFromName(name: string, options?: { singleThread?: boolean }): Promise<unknown>;
  }
  export namespace zKey {
    function contribute(
      oldZkey: Uint8Array | MemFile,
      newZkey: MemFile,
      name: string,
      entropy: string,
      logger?: Logger,
    ): Promise<Uint8Array>;
  }
}
