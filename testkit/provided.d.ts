/**
 * Values the global setup provides to every test file (see global-setup.ts and env.ts).
 */
export {};

declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://127.0.0.1:PORT` of the run's DynamoDB emulator. */
    dynamoEndpoint: string;
    /** `http://127.0.0.1:PORT` of the run's s3rver. */
    s3Endpoint: string;
    /** `dynamodb-local` or `dynalite`. */
    dynamoKind: string;
  }
}
