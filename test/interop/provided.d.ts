/**
 * Values the interoperability suite's global setup (probe-setup.ts) provides to its test files.
 */
export {};

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the built probe (`dotnet <probeDll> feed|versions`). */
    probeDll: string;
    /** `dotnet --version`, e.g. `10.0.401`. */
    dotnetSdk: string;
  }
}
