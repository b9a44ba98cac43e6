/** How long-running ceremony operations report what they are doing (the CLI prints to stderr). */
export type Progress = (message: string) => void;

export const silentProgress: Progress = () => {};
