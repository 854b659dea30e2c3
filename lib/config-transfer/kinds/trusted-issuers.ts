import { type Entry, json, type Kind, number } from '../kind.ts';
import { rowsOf, upsert } from '../queries.ts';

/** Outside issuers whose tokens are exchanged, with their policies. */
export const trustedIssuers: Kind<'trustedIssuers'> = {
  list: 'trustedIssuers',

  async exported(db) {
    return (await rowsOf(db, 'trusted_issuers')).map((row) => ({
      id: String(row.id),
      name: String(row.name),
      issuer: String(row.issuer),
      jwksUri: String(row.jwks_uri),
      audience: String(row.audience),
      algorithms: JSON.parse(String(row.algorithms)) as Entry<'trustedIssuers'>['algorithms'],
      userMapping: json(row.user_mapping) as Entry<'trustedIssuers'>['userMapping'],
      applicationIds: (JSON.parse(String(row.application_ids)) as string[]).sort(),
      createdAt: number(row.created_at),
    }));
  },

  async imported(trx, entries, progress) {
    for (const policy of entries) {
      await upsert(
        trx,
        'trusted_issuers',
        {
          id: policy.id,
          name: policy.name,
          issuer: policy.issuer,
          jwks_uri: policy.jwksUri,
          audience: policy.audience,
          algorithms: JSON.stringify(policy.algorithms),
          user_mapping: JSON.stringify(policy.userMapping),
          application_ids: JSON.stringify(policy.applicationIds),
          created_at: policy.createdAt,
        },
        progress,
      );
    }
  },
};
