import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { idParams } from '../shared/entity-id.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { variablesOf } from './compose-email.ts';
import {
  deleteEmailTemplate,
  deleteEmailTemplates,
  findEmailTemplate,
  listEmailTemplates,
  updateEmailTemplateDetails,
  upsertEmailTemplate,
} from './email-template-queries.ts';
import {
  type EmailTemplate,
  emailTemplateSchema,
  languageTagSchema,
  previewSchema,
  templateDetailsSchema,
  templateTypeSchema,
} from './email-template-schemas.ts';
import type { TemplatedMessage } from './message-connector.ts';
import { renderTemplate } from './render-template.ts';

const tag = 'Email templates';
const filterQuery = z.object({
  languageTag: languageTagSchema.optional(),
  templateType: templateTypeSchema.optional(),
});

const replaceBody = z.strictObject({
  templates: z
    .array(
      z.strictObject({
        languageTag: languageTagSchema,
        templateType: templateTypeSchema,
        details: templateDetailsSchema,
      }),
    )
    .min(1)
    .max(100)
    .superRefine((templates, ctx) => {
      const seen = new Set<string>();
      for (const [index, { languageTag, templateType }] of templates.entries()) {
        const key = `${languageTag} ${templateType}`;
        if (seen.has(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [index],
            message: `names ${templateType} in ${languageTag} a second time: one template per language tag and type`,
          });
        }
        seen.add(key);
      }
    }),
});

const previewBody = z.strictObject({ templateType: templateTypeSchema, details: templateDetailsSchema });

/** What a preview fills the variables with: a message of that type as it could be sent. */
const sampleMessage = (templateType: z.output<typeof templateTypeSchema>): TemplatedMessage =>
  templateType === 'OrganizationInvitation'
    ? {
        to: 'invitee@example.com',
        type: 'email',
        purpose: 'OrganizationInvitation',
        link: 'https://app.example.com/invitations/accept?token=sample',
        organization: { id: 'sample-organization', name: 'Acme & Sons <Sample>', branding: {} },
        inviter: { id: 'sample-user', name: 'Jane Doe', username: 'jane', primaryEmail: 'jane@example.com' },
        locale: 'en',
      }
    : { to: 'user@example.com', type: 'email', purpose: templateType, code: '123456' };

const notFound = (id: string) => new RequestError('entity.not_exists_with_id', { entity: 'email template', id });

async function existingTemplate(db: Queryable, id: string): Promise<EmailTemplate> {
  const template = await findEmailTemplate(db, id);
  if (!template) {
    throw notFound(id);
  }
  return template;
}

/**
 * Logto's email templates: what the SMTP connector sends for each purpose (sign-in, registration,
 * password reset, invitation, generic…) and language, instead of the built-in emails. Mustache
 * templates, checked when saved (400 naming the field). No webhook event: the catalogue has none.
 */
export function emailTemplateRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/email-templates',
      summary: 'List the email templates, by language tag and template type if given',
      tag,
      query: filterQuery,
      response: z.array(emailTemplateSchema),
    },
    async ({ query }) => listEmailTemplates(db, query),
  );

  api.add(
    {
      method: 'put',
      path: '/email-templates',
      summary: 'Create or replace email templates (one per language tag and template type)',
      tag,
      body: replaceBody,
      response: z.array(emailTemplateSchema),
      errors: [422],
    },
    async ({ body }, _ctx, trx) => {
      const createdAt = Date.now();
      const saved: EmailTemplate[] = [];
      try {
        for (const template of body.templates) {
          saved.push(await upsertEmailTemplate(trx, { id: generateId(), createdAt, ...template }));
        }
      } catch (error) {
        // Another request created the same language tag and type meanwhile.
        if (isUniqueViolation(error)) {
          throw new RequestError('entity.unique_integrity_violation', {
            reason: 'Another request saved a template of the same language tag and type: try again.',
          });
        }
        throw error;
      }
      return saved;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/email-templates',
      summary: 'Delete the email templates of a language tag, a template type, or both',
      tag,
      query: filterQuery,
      response: z.object({ rowCount: z.number() }),
      errors: [422],
    },
    async ({ query }, _ctx, trx) => {
      if (query.languageTag === undefined && query.templateType === undefined) {
        throw new RequestError('connector.email_connector.bulk_deletion_no_filter');
      }
      return { rowCount: await deleteEmailTemplates(trx, query) };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/email-templates/preview',
      summary: 'Render email template details with sample variables, as they would be sent',
      tag,
      body: previewBody,
      response: previewSchema,
      // It writes nothing.
      transaction: false,
    },
    ({ body }) => renderTemplate(body.details, variablesOf(sampleMessage(body.templateType))),
  );

  api.add(
    {
      method: 'get',
      path: '/email-templates/:id',
      summary: 'Get an email template',
      tag,
      params: idParams,
      response: emailTemplateSchema,
      errors: [404],
    },
    async ({ params }) => existingTemplate(db, params.id),
  );

  api.add(
    {
      method: 'patch',
      path: '/email-templates/:id/details',
      summary: "Update an email template's details (the fields given)",
      tag,
      params: idParams,
      body: templateDetailsSchema.partial(),
      response: emailTemplateSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      const template = await existingTemplate(trx, params.id);
      const details = { ...template.details, ...body };
      await updateEmailTemplateDetails(trx, params.id, details);
      return { ...template, details };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/email-templates/:id',
      summary: 'Delete an email template',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      if (!(await deleteEmailTemplate(trx, params.id))) {
        throw notFound(params.id);
      }
    },
  );
}
