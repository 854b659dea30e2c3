import type { z } from 'zod';

import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import type { MessagePurpose } from './codes.ts';
import { type EmailTemplate, storedDetailsSchema } from './email-template-schemas.ts';

/* `email_templates`: operators' email templates, one per language tag and template type. */

type EmailTemplateRow = {
  id: string;
  language_tag: string;
  template_type: MessagePurpose;
  details: string;
  created_at: number | string;
};

const detailsOf = jsonColumn('email_templates', 'details', storedDetailsSchema);

const toTemplate = (row: EmailTemplateRow): EmailTemplate => ({
  tenantId,
  id: row.id,
  languageTag: row.language_tag,
  templateType: row.template_type,
  details: detailsOf(row.details),
  createdAt: Number(row.created_at),
});

export type TemplateFilter = { languageTag?: string; templateType?: MessagePurpose };

const where = ({ languageTag, templateType }: TemplateFilter) => ({
  ...(languageTag !== undefined && { language_tag: languageTag }),
  ...(templateType !== undefined && { template_type: templateType }),
});

/** By language tag, then type. */
export async function listEmailTemplates(db: Queryable, filter: TemplateFilter = {}): Promise<EmailTemplate[]> {
  const rows = await db('email_templates')
    .where(where(filter))
    .orderBy([{ column: 'language_tag' }, { column: 'template_type' }])
    .select<EmailTemplateRow[]>('*');
  return rows.map(toTemplate);
}

export async function findEmailTemplate(db: Queryable, id: string): Promise<EmailTemplate | undefined> {
  const row = await db('email_templates').where({ id }).first<EmailTemplateRow | undefined>();
  return row && toTemplate(row);
}

export async function findEmailTemplateFor(
  db: Queryable,
  templateType: MessagePurpose,
  languageTag: string,
): Promise<EmailTemplate | undefined> {
  const row = await db('email_templates')
    .where({ template_type: templateType, language_tag: languageTag })
    .first<EmailTemplateRow | undefined>();
  return row && toTemplate(row);
}

/**
 * Writes the template of its language tag and type: a new row, or the existing row's details (its
 * id and creation time stay). Callers lock or run one at a time per pair (the unique key says so).
 */
export async function upsertEmailTemplate(
  db: Queryable,
  template: {
    id: string;
    languageTag: string;
    templateType: MessagePurpose;
    details: z.input<typeof storedDetailsSchema>;
    createdAt: number;
  },
): Promise<EmailTemplate> {
  const existing = await db('email_templates')
    .where({ language_tag: template.languageTag, template_type: template.templateType })
    .first<EmailTemplateRow | undefined>();
  const details = JSON.stringify(template.details);
  if (existing) {
    await db('email_templates').where({ id: existing.id }).update({ details });
    return toTemplate({ ...existing, details });
  }
  const row: EmailTemplateRow = {
    id: template.id,
    language_tag: template.languageTag,
    template_type: template.templateType,
    details,
    created_at: template.createdAt,
  };
  await db('email_templates').insert(row);
  return toTemplate(row);
}

export async function updateEmailTemplateDetails(
  db: Queryable,
  id: string,
  details: z.input<typeof storedDetailsSchema>,
): Promise<void> {
  await db('email_templates')
    .where({ id })
    .update({ details: JSON.stringify(details) });
}

export async function deleteEmailTemplate(db: Queryable, id: string): Promise<boolean> {
  return (await db('email_templates').where({ id }).delete()) > 0;
}

/** At least one filter: the route refuses to delete every template at once. */
export async function deleteEmailTemplates(db: Queryable, filter: TemplateFilter): Promise<number> {
  return db('email_templates').where(where(filter)).delete();
}
