import { useEffect, useRef, useState } from 'preact/hooks';

import type { MessagePurpose } from '../../../lib/messages/codes.ts';
import type { EmailPreview, EmailTemplate } from '../../../lib/messages/email-template-schemas.ts';
import { api } from '../api.ts';
import { formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { Rich } from '../i18n/rich.tsx';
import { ConfirmButton, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Template = Pick<EmailTemplate, 'id' | 'languageTag' | 'templateType' | 'details' | 'createdAt'>;
type Details = Template['details'];

/** Every purpose an email is sent for, the common ones first (Logto's template types). */
const purposes: MessagePurpose[] = [
  'SignIn',
  'Register',
  'ForgotPassword',
  'OrganizationInvitation',
  'Generic',
  'UserPermissionValidation',
  'BindNewIdentifier',
  'MfaVerification',
  'BindMfa',
];
const labelOf = (type: MessagePurpose) => t(`emailTemplates.purposes.${type}`);

const codeVariables = ['{{code}}', '{{expiresInMinutes}}'];
const invitationVariables = [
  '{{link}}',
  '{{organization.name}}',
  '{{inviter.name}}',
  '{{#inviter}}…{{/inviter}}',
  '{{code}}',
  '{{locale}}',
];

/** What a new template starts from: a working email of that kind, for the operator to change. */
function starter(type: MessagePurpose): Details {
  if (type === 'OrganizationInvitation') {
    return {
      subject: 'You are invited to join {{organization.name}}',
      content: [
        '<!doctype html>',
        '<html><body style="font-family: sans-serif; color: #1f2933">',
        '  <p>{{#inviter}}{{inviter.name}} invited you{{/inviter}}{{^inviter}}You are invited{{/inviter}} to join <strong>{{organization.name}}</strong>.</p>',
        '  <p><a href="{{link}}" style="display: inline-block; padding: 10px 18px; background: #2b59c3; color: #fff; text-decoration: none; border-radius: 6px">Accept the invitation</a></p>',
        '  <p style="color: #52606d">If you did not expect this invitation, you can ignore this message.</p>',
        '</body></html>',
      ].join('\n'),
      contentType: 'text/html',
    };
  }
  return {
    subject: 'Your code: {{code}}',
    content: [
      '<!doctype html>',
      '<html><body style="font-family: sans-serif; color: #1f2933">',
      '  <p>Use this code to continue:</p>',
      '  <p style="font-size: 28px; font-weight: bold; letter-spacing: 4px">{{code}}</p>',
      '  <p style="color: #52606d">It expires in {{expiresInMinutes}} minutes. If you did not ask for it, you can ignore this message.</p>',
      '</body></html>',
    ].join('\n'),
    contentType: 'text/html',
  };
}

/** The details the form holds; empty optional fields are left out. */
function detailsOf(form: HTMLFormElement): Details {
  const data = new FormData(form);
  const text = (name: string) => {
    const value = data.get(name);
    return typeof value === 'string' ? value : '';
  };
  return {
    subject: text('subject'),
    content: text('content'),
    contentType: text('contentType') || 'text/html',
    ...(text('sendFrom') ? { sendFrom: text('sendFrom') } : {}),
    ...(text('replyTo') ? { replyTo: text('replyTo') } : {}),
  };
}

/**
 * One template's editor and its preview: the preview is rendered by the service with sample values
 * (`POST /api/email-templates/preview`), then shown in a sandboxed frame that the service serves
 * under a policy of its own (`/console/email-preview`), so that the email's inline styles apply.
 */
function TemplateEditor({
  type,
  languageTag,
  stored,
  onChange,
}: {
  type: MessagePurpose;
  languageTag: string;
  stored?: Template;
  onChange: () => void;
}) {
  const action = useAction();
  const previewing = useAction();
  const [preview, setPreview] = useState<EmailPreview>();
  const form = useRef<HTMLFormElement>(null);
  const frameForm = useRef<HTMLFormElement>(null);
  const frameHtml = useRef<HTMLInputElement>(null);
  const details = stored?.details ?? starter(type);

  const showPreview = () => {
    if (!form.current) {
      return;
    }
    const body = { templateType: type, details: detailsOf(form.current) };
    void previewing.run(async () => {
      setPreview(await api<EmailPreview>('POST', 'email-templates/preview', body));
    });
  };
  // Once the frame is shown: a frame loaded while hidden is not painted.
  useEffect(() => {
    if (preview?.html !== undefined && frameHtml.current && frameForm.current) {
      frameHtml.current.value = preview.html;
      frameForm.current.submit();
    }
  }, [preview]);
  const save = (event: Event) => {
    formValues(event);
    const body = {
      templates: [{ languageTag, templateType: type, details: detailsOf(event.currentTarget as HTMLFormElement) }],
    };
    void action.run(async () => {
      await api('PUT', 'email-templates', body);
      onChange();
    });
  };
  const error = action.error ?? previewing.error;
  return (
    <section class="card" aria-label={t('emailTemplates.template')}>
      <h2>
        {labelOf(type)} · {languageTag}
      </h2>
      <p class="hint">
        {stored ? t('emailTemplates.saved', { time: formatTime(stored.createdAt) }) : t('emailTemplates.notSaved')}
      </p>
      <form ref={form} onSubmit={save} aria-label={t('emailTemplates.emailTemplate')}>
        <Field label={t('emailTemplates.subject')} name="subject" defaultValue={details.subject} required />
        <Field label={t('emailTemplates.body')} name="content">
          {(id) => (
            <textarea id={id} name="content" class="mono" rows={14} spellcheck={false}>
              {details.content}
            </textarea>
          )}
        </Field>
        <p class="hint">
          {t('emailTemplates.variables')}{' '}
          {(type === 'OrganizationInvitation' ? invitationVariables : codeVariables).map((variable) => (
            <code key={variable}>{variable} </code>
          ))}
        </p>
        <Field label={t('emailTemplates.bodyType')} name="contentType">
          {(id) => (
            <select id={id} name="contentType">
              <option value="text/html" selected={details.contentType !== 'text/plain'}>
                {t('emailTemplates.html')}
              </option>
              <option value="text/plain" selected={details.contentType === 'text/plain'}>
                {t('emailTemplates.plain')}
              </option>
            </select>
          )}
        </Field>
        <Field
          label={t('emailTemplates.sendFrom')}
          name="sendFrom"

          defaultValue={details.sendFrom ?? ''}
          hint={t('emailTemplates.sendFromHint')}
        />
        <Field
          label={t('emailTemplates.replyTo')}
          name="replyTo"
          type="email"

          defaultValue={details.replyTo ?? ''}
        />
        <FormError error={error} />
        <div class="actions">
          <button type="button" onClick={showPreview} disabled={previewing.busy}>
            {t('emailTemplates.preview')}
          </button>
          <button class="primary" disabled={action.busy}>
            {t('common.save')}
          </button>
          {stored && (
            <ConfirmButton
              label={t('emailTemplates.delete')}
              question={t('emailTemplates.confirmDelete', { purpose: labelOf(type), language: languageTag })}
              onConfirm={() => action.run(() => api('DELETE', `email-templates/${stored.id}`).then(onChange))}
            />
          )}
          {action.done && <span role="status"> {t('common.saved')}</span>}
        </div>
      </form>
      {/* The frame's document comes from this form's answer: see the editor's comment. */}
      <form ref={frameForm} method="post" action="/console/email-preview" target="email-preview" hidden>
        <input ref={frameHtml} type="hidden" name="html" />
      </form>
      <section aria-label={t('emailTemplates.preview')} class="preview" hidden={!preview}>
        <h3>{t('emailTemplates.previewHeading')}</h3>
        <dl>
          <dt>{t('emailTemplates.subject')}</dt>
          <dd data-testid="preview-subject">{preview?.subject}</dd>
          {preview?.senderName && (
            <>
              <dt>{t('emailTemplates.from')}</dt>
              <dd>{preview.senderName}</dd>
            </>
          )}
        </dl>
        <iframe
          name="email-preview"
          title={t('emailTemplates.previewFrame')}
          sandbox=""
          hidden={preview?.html === undefined}
          class="email-preview"
        />
        <details open={preview?.html === undefined}>
          <summary>{t('emailTemplates.plainPart')}</summary>
          <pre>{preview?.text}</pre>
        </details>
      </section>
    </section>
  );
}

/** Operators' email templates per purpose and language: GET/PUT/DELETE /api/email-templates. */
export function EmailTemplatesPage() {
  const templates = useLoad<Template[]>('email-templates');
  const [type, setType] = useState<MessagePurpose>('SignIn');
  const [languageTag, setLanguageTag] = useState('en');
  return (
    <>
      <h1>{t('nav.emailTemplates')}</h1>
      <p>
        <Rich text={t('emailTemplates.intro')} />
      </p>
      <Loaded state={templates}>
        {(list) => (
          <>
            {list.length > 0 && (
              <table>
                <caption>{t('emailTemplates.savedTemplates')}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('emailTemplates.purpose')}</th>
                    <th scope="col">{t('shell.language')}</th>
                    <th scope="col">{t('emailTemplates.subject')}</th>
                    <th scope="col">
                      <span class="skip">{t('emailTemplates.edit')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((template) => (
                    <tr key={template.id}>
                      <td>{labelOf(template.templateType)}</td>
                      <td>{template.languageTag}</td>
                      <td class="clip">{template.details.subject}</td>
                      <td>
                        <button
                          type="button"
                          class="link"
                          onClick={() => {
                            setType(template.templateType);
                            setLanguageTag(template.languageTag);
                          }}
                        >
                          {t('emailTemplates.editOne', {
                            purpose: labelOf(template.templateType),
                            language: template.languageTag,
                          })}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <form
              class="card inline"
              aria-label={t('emailTemplates.choose')}
              onSubmit={(event) => event.preventDefault()}
            >
              <Field label={t('emailTemplates.purpose')} name="templateType">
                {(id) => (
                  <select
                    id={id}
                    name="templateType"
                    onChange={(event) => setType(event.currentTarget.value as MessagePurpose)}
                  >
                    {purposes.map((purpose) => (
                      <option key={purpose} value={purpose} selected={purpose === type}>
                        {labelOf(purpose)}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field label={t('emailTemplates.languageTag')} name="languageTag">
                {(id) => (
                  <input
                    id={id}
                    name="languageTag"
                    value={languageTag}
                    onChange={(event) => setLanguageTag(event.currentTarget.value.trim() || 'en')}
                  />
                )}
              </Field>
            </form>
            <TemplateEditor
              key={`${type} ${languageTag}`}
              type={type}
              languageTag={languageTag}
              stored={list.find((template) => template.templateType === type && template.languageTag === languageTag)}
              onChange={templates.reload}
            />
          </>
        )}
      </Loaded>
    </>
  );
}
