import { z } from 'zod';

import { tenantId } from '../shared/tenant.ts';
import { messagePurposes } from './codes.ts';
import { templateProblem } from './render-template.ts';

/* Logto's email templates (`/api/email-templates`): their fields, checked as the API takes them. */

/** Logto's `TemplateType`: what a message is for (a verification code's purpose, or an invitation). */
export const templateTypeSchema = z.enum(messagePurposes);

/** A BCP 47 language tag as Logto keys templates by (`en`, `fr`, `pt-BR`, `zh-Hant-TW`). */
export const languageTagSchema = z
  .string()
  .max(64)
  .regex(/^[a-zA-Z]{2,8}(-[a-zA-Z0-9]{1,8})*$/, 'must be a language tag, such as en, fr or pt-BR');

/** A body this long is far past any email; it keeps a stored template within one request. */
export const maxContentLength = 256 * 1024;

const template = (max: number) =>
  z
    .string()
    .max(max)
    .superRefine((value, ctx) => {
      const problem = templateProblem(value);
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `This template ${problem}.` });
      }
    });

export const contentTypes = ['text/html', 'text/plain'] as const;

/**
 * `details` as the API takes it (Logto's `emailTemplateDetailsGuard`). `subject`, `content` and
 * `sendFrom` (the sender's display name) are Mustache templates; `replyTo` is an address.
 * `contentType` says whether `content` is HTML (the default) or plain text.
 */
export const templateDetailsSchema = z.strictObject({
  subject: template(512).pipe(z.string().trim().min(1, 'must not be empty')),
  content: template(maxContentLength).pipe(z.string().trim().min(1, 'must not be empty')),
  contentType: z.enum(contentTypes).optional(),
  replyTo: z.email().max(256).optional(),
  sendFrom: template(256).optional(),
});
export type TemplateDetailsInput = z.output<typeof templateDetailsSchema>;

/** `details` as stored: only this service writes it, through the schema above. */
export const storedDetailsSchema = z.object({
  subject: z.string(),
  content: z.string(),
  contentType: z.string().optional(),
  replyTo: z.string().optional(),
  sendFrom: z.string().optional(),
});

/** Logto's `EmailTemplate`. */
export const emailTemplateSchema = z.object({
  tenantId: z.literal(tenantId),
  id: z.string(),
  languageTag: z.string(),
  templateType: templateTypeSchema,
  details: storedDetailsSchema,
  createdAt: z.number(),
});
export type EmailTemplate = z.output<typeof emailTemplateSchema>;

/** A template as it would be sent: rendered with a sample message's variables. */
export const previewSchema = z.object({
  subject: z.string(),
  text: z.string(),
  html: z.string().optional(),
  replyTo: z.string().optional(),
  senderName: z.string().optional(),
});
export type EmailPreview = z.output<typeof previewSchema>;
