export declare function silenceSnarkjsHandleWarnings(): void;
