/** Exit codes, as the README documents them. */
export const ExitCode = { done: 0, runFailed: 1, usage: 2, interrupted: 130 } as const;
