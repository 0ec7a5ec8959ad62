/**
 * The names `[harness] pass_env` accepts and its default: plain data the config schema
 * validates against and the harness selects with (src/harness/pass-env.ts).
 */

/**
 * The default `pass_env`: the standard proxy names (both cases, as curl, Node's undici and Rust's
 * reqwest read them), CA-bundle names (OpenSSL `SSL_CERT_FILE`/`SSL_CERT_DIR`, Node
 * `NODE_EXTRA_CA_CERTS`, Python requests, curl) and locale names. A name ending in `*` matches
 * every name with that prefix.
 */
export const DEFAULT_PASS_ENV: readonly string[] = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'LANG',
  'LANGUAGE',
  'LC_*',
];

/** A `pass_env` entry: an environment name, or a prefix followed by `*`. */
export const PASS_ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;
