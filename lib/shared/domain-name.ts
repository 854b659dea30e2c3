import { z } from 'zod';

/**
 * A domain name such as `example.com`, lower-cased: labels of letters, digits, hyphens and
 * underscores (DNS names may hold `_`, and Logto takes `sso_example.com`), at least two of them.
 * SSO connectors' domains and organizations' just-in-time email domains are both such names.
 */
export const domainName = z
  .string()
  .max(128)
  .regex(/^(?!-)[\w-]{1,63}(?<!-)(\.(?!-)[\w-]{1,63}(?<!-))+$/, 'must be a domain name such as example.com')
  .transform((value) => value.toLowerCase());
