import { openConfigSecret, sealConfigSecret, sealedColumns } from '../../storage/sealed-columns.ts';
import { captchaSecretField } from '../file.ts';
import { json, type Kind, number } from '../kind.ts';
import { deleteOtherRows, rowsOf, storedRow, upsert } from '../queries.ts';

const sealedIn = sealedColumns.captchaProviderSecrets;

/** The captcha provider, its secret key only when secrets are asked for. */
export const captchaProviders: Kind<'captchaProviders'> = {
  list: 'captchaProviders',

  async exported(db, options) {
    return (await rowsOf(db, 'captcha_providers')).map((row) => {
      const config = openConfigSecret(db, sealedIn, String(row.id), json(row.config));
      return {
        id: String(row.id),
        config: options.withSecrets
          ? config
          : Object.fromEntries(Object.entries(config).filter(([key]) => key !== captchaSecretField)),
        createdAt: number(row.created_at),
      };
    });
  },

  async imported(trx, entries, progress) {
    for (const provider of entries) {
      const stored = await storedRow(trx, 'captcha_providers', provider.id, 'config');
      const storedConfig = stored ? json(stored.config) : {};
      let config = provider.config;
      if (typeof config[captchaSecretField] === 'string') {
        config = sealConfigSecret(trx, sealedIn, provider.id, config);
      } else if (storedConfig.type === config.type && typeof storedConfig[captchaSecretField] === 'string') {
        // Sealed for this very row: copied as it is.
        config = { ...config, [captchaSecretField]: storedConfig[captchaSecretField] };
      } else {
        // A provider without its secret key could check no token: left out rather than stored broken.
        progress.notes.push(
          `captcha provider ${provider.id} (${String(config.type)}): not imported, the file has no secret key; export with --with-secrets or set it with PUT /api/captcha-provider (while the captcha policy is on and no provider is set up, every sign-in is refused)`,
        );
        continue;
      }
      await deleteOtherRows(trx, 'captcha_providers', provider.id);
      await upsert(
        trx,
        'captcha_providers',
        { id: provider.id, config: JSON.stringify(config), created_at: provider.createdAt, updated_at: Date.now() },
        progress,
      );
    }
  },
};
