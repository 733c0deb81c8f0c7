/** asl-validator ships no types: the one function the backfill's infra test calls. */
declare module 'asl-validator' {
  interface AslValidatorResult {
    readonly isValid: boolean;
    readonly errors: ReadonlyArray<{ readonly message?: string; readonly path?: string }>;
    readonly errorsText: (separator?: string) => string;
  }
  export default function validator(
    definition: unknown,
    options?: { checkPaths?: boolean; checkArn?: boolean },
  ): AslValidatorResult;
}
