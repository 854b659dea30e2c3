import type { Knex } from 'knex';

import { isMysql } from './collation.ts';

/**
 * On MySQL, `text` holds 64 KiB; these columns hold JSON whose fields the API accepts at sizes that
 * add up to more (200 redirect URIs of 2,048 characters, 50 hook headers of 8 KB, 1,000 rejected
 * password words, a user's identities, 64 KiB of subject-token context, an IdP's claims). They
 * become mediumtext (16 MiB), as custom data already is. SQLite's text has no such limit.
 */
const columns: Record<string, string[]> = {
  applications: ['oidc_client_metadata', 'custom_client_metadata'],
  users: ['identities'],
  sign_in_experience: ['settings'],
  subject_tokens: ['context'],
  hooks: ['config'],
  social_connectors: ['metadata'],
  user_sso_identities: ['detail'],
};

async function resize(db: Knex, type: 'mediumtext' | 'text'): Promise<void> {
  if (!isMysql(db)) {
    return;
  }
  for (const [table, names] of Object.entries(columns)) {
    await db.schema.alterTable(table, (builder) => {
      for (const name of names) {
        builder.text(name, type).notNullable().alter();
      }
    });
  }
}

export async function up(db: Knex): Promise<void> {
  await resize(db, 'mediumtext');
}

export async function down(db: Knex): Promise<void> {
  await resize(db, 'text');
}
