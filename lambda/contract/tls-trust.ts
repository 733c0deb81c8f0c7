/**
 * A TLS certificate a client refused (self-signed, an issuer it does not know, expired, made for another name): what
 * it means and what to do, said the same way for the catalog's client and the AWS clients. Node trusts its own roots
 * only: behind a proxy that inspects TLS, or with endpoints signed by a private CA, it needs that CA's certificate in
 * `NODE_EXTRA_CA_CERTS` (read once, when the process starts).
 */

/** Node's codes for a certificate it does not trust. */
const UNTRUSTED_CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The first error `code` in `codes` along `error`'s `cause` chain (8 deep at most), looking into an
 * `AggregateError`'s first error too (a connection tried on several addresses fails with one).
 */
export function codeInChain(error: unknown, codes: ReadonlySet<string>): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && codes.has(code)) return code;
    if (current instanceof AggregateError && current.errors[0] !== undefined) {
      const inner = codeInChain(current.errors[0], codes);
      if (inner !== undefined) return inner;
    }
    current = current.cause;
  }
  return undefined;
}

/** The untrusted-certificate code along `error`'s `cause` chain, or undefined when it is not such an error. */
export function untrustedCertificateCode(error: unknown): string | undefined {
  return codeInChain(error, UNTRUSTED_CERTIFICATE_CODES);
}

/** What to do about the certificate of `where` (a host, or a setting and its value) refused with `code`. */
export function untrustedCertificateAdvice(where: string, code: string): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the TLS certificate of ${where} is made for another name (${code}): correct the URL, or the proxy's TLS inspection`;
  return `the TLS certificate of ${where} is not trusted (${code}): when a proxy inspecting TLS or a private CA signs it, give that CA's certificate (a PEM file) in NODE_EXTRA_CA_CERTS`;
}
