/**
 * A store URL as the CLI prints it: without the password of a `postgres://user:password@host`
 * URL or of a `password=` query parameter, so a command's output never holds a credential.
 */

/** Query parameters of a connection URL that hold a secret. */
const SECRET_PARAMETERS = new Set(['password', 'sslpassword']);

/** `url` with every credential replaced by `***`; a URL it cannot parse is shown by scheme only. */
export function printableStoreUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//i.test(url)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url.slice(0, url.indexOf(':'))}:(connection string)`;
  }
  if (parsed.password !== '') parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMETERS.has(key.toLowerCase())) parsed.searchParams.set(key, '***');
  }
  return parsed.toString();
}
