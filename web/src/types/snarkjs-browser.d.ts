// What snarkjs's browser build (node_modules/snarkjs/build/browser.esm.js) takes beyond what
// types/snarkjs.d.ts declares (web/tsconfig.json includes it, so Logger, MemFile and the curves are
// declared there once): a contribution from an in-memory key to an in-memory key.
declare module 'snarkjs' {
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
