import { type Entry, json, type Kind, number } from '../kind.ts';
import { rowsOf, upsert } from '../queries.ts';

/** An operator's email templates, by language and purpose. */
export const emailTemplates: Kind<'emailTemplates'> = {
  list: 'emailTemplates',

  async exported(db) {
    return (await rowsOf(db, 'email_templates')).map((row) => ({
      id: String(row.id),
      languageTag: String(row.language_tag),
      templateType: String(row.template_type) as Entry<'emailTemplates'>['templateType'],
      details: json(row.details) as Entry<'emailTemplates'>['details'],
      createdAt: number(row.created_at),
    }));
  },

  async imported(trx, entries, progress) {
    for (const template of entries) {
      await upsert(
        trx,
        'email_templates',
        {
          id: template.id,
          language_tag: template.languageTag,
          template_type: template.templateType,
          details: JSON.stringify(template.details),
          created_at: template.createdAt,
        },
        progress,
      );
    }
  },
};
