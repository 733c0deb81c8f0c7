// The three small jshttp modules the feed server uses (CommonJS, no types of their own): only what serve calls.
declare module 'range-parser' {
  /** A range of bytes, both ends included. */
  interface Range {
    start: number;
    end: number;
  }
  /** The ranges asked for, with the unit (`bytes`). */
  type Ranges = Range[] & { type: string };
  /** `-1`: unsatisfiable; `-2`: malformed; otherwise the ranges (combined when `combine`). */
  function rangeParser(size: number, header: string, options?: { combine?: boolean }): -1 | -2 | Ranges;
  export default rangeParser;
}
declare module 'fresh' {
  /** Whether a response with `responseHeaders` is still fresh for the conditional request's headers (304). */
  function fresh(
    requestHeaders: Record<string, string | string[] | undefined>,
    responseHeaders: Record<string, string | undefined>,
  ): boolean;
  export default fresh;
}
declare module 'negotiator' {
  /** Content negotiation over a request's `Accept-*` headers. */
  class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /** The codings of `available` the request accepts, most preferred first (`identity` when nothing is said). */
    encodings(available?: string[]): string[];
  }
  export default Negotiator;
}
