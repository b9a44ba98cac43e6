const t0 = performance.now();
const m = await import('./dist/core/kernel/g1-multi-exp.js');
const t1 = performance.now();
m.startG1MultiExpThreads();
await m.g1MultiExp(new Uint8Array(0), new Uint8Array(0), 8);
const t2 = performance.now();
console.log(`import ${(t1 - t0).toFixed(0)} ms, threads ready ${(t2 - t1).toFixed(0)} ms`);
await m.closeG1MultiExp();
