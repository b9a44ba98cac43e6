pragma circom 2.1.0;

include "lib/mix-chain.circom";

// Test stand-in for the production `treeUpdate` circuit: 64 public inputs, 800 rounds.
component main {public [pub]} = MixChain(64, 800);
