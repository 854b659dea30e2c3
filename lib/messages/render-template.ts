import Mustache from 'mustache';

/**
 * Operators' email templates are Mustache: logic-less (variables, sections over optional values, no
 * code), and every `{{variable}}` is HTML-escaped in an HTML body. What a variable holds comes from
 * users (an organization's or an inviter's name), so the unescaped forms `{{{x}}}` and `{{&x}}` are
 * refused when a template is saved, and partials (`{{>x}}`) too: there are none to include.
 */

/** Mustache keeps every template it parsed; templates come from the API, so nothing is kept (cleared after each use). */
const writer = new Mustache.Writer();

type Token = [type: string, value: string, start: number, end: number, children?: Token[]];

const refused: Record<string, string> = {
  '&': 'is unescaped: write {{name}}, which escapes what the variable holds',
  '>': 'is a partial, and there are none to include',
};

function parse(template: string): Token[] {
  try {
    return writer.parse(template) as Token[];
  } finally {
    writer.clearCache();
  }
}

/** Why `template` cannot be used (its syntax, or a refused tag), or undefined when it can. */
export function templateProblem(template: string): string | undefined {
  let tokens: Token[];
  try {
    tokens = parse(template);
  } catch (error) {
    return `is not a valid template: ${error instanceof Error ? error.message : String(error)}`;
  }
  const walk = (list: Token[]): string | undefined => {
    for (const [type, value, , , children] of list) {
      const reason = refused[type];
      if (reason) {
        return `uses {{${type}${value}}}, which ${reason}`;
      }
      const inner = children && walk(children);
      if (inner) {
        return inner;
      }
    }
    return undefined;
  };
  return walk(tokens);
}

/** The variables of one message: strings, and objects of them (`organization.name`); absent ones render empty. */
export type TemplateVariables = { [name: string]: string | number | TemplateVariables | undefined };

/**
 * A copy without a prototype: a template naming `{{constructor}}` or `{{toString}}` finds nothing,
 * rather than a function of Object's that Mustache would call.
 */
function view(variables: TemplateVariables): TemplateVariables {
  const copy = Object.create(null) as TemplateVariables;
  for (const [name, value] of Object.entries(variables)) {
    copy[name] = typeof value === 'object' ? view(value) : value;
  }
  return copy;
}

const asIs = (value: unknown) => String(value);

function render(template: string, variables: TemplateVariables, escape?: (value: unknown) => string): string {
  try {
    return writer.render(template, view(variables), undefined, escape ? { escape } : undefined);
  } finally {
    writer.clearCache();
  }
}

/** A header holds one line: a variable or the template may bring line breaks or other control characters. */
export const oneLine = (value: string) => value.replace(/\p{Cc}+/gu, ' ').trim();

/** What an operator's template (Logto's `details`) says, as stored. */
export type TemplateDetails = {
  subject: string;
  content: string;
  contentType?: string;
  replyTo?: string;
  sendFrom?: string;
};

/** An email made from a template: the HTML part only for an HTML body, the text part always. */
export type RenderedEmail = { subject: string; text: string; html?: string; replyTo?: string; senderName?: string };

/**
 * The email a template makes with these variables. An HTML body (`text/html`, the default) has its
 * variables escaped and gets a plain-text part made from it; a `text/plain` body is sent as text,
 * variables as they are. Subject, sender name and reply-to are one line each, never escaped (they
 * are headers, not HTML); an empty sender name or reply-to is left out.
 */
export async function renderTemplate(details: TemplateDetails, variables: TemplateVariables): Promise<RenderedEmail> {
  const headerLine = (template: string | undefined) =>
    template === undefined ? undefined : oneLine(render(template, variables, asIs)) || undefined;
  const replyTo = headerLine(details.replyTo);
  const senderName = headerLine(details.sendFrom);
  const headers = {
    subject: headerLine(details.subject) ?? '',
    ...(replyTo && { replyTo }),
    ...(senderName && { senderName }),
  };
  if (details.contentType === 'text/plain') {
    return { ...headers, text: render(details.content, variables, asIs) };
  }
  const html = render(details.content, variables);
  // Loaded when an operator's template is first rendered, not at every start (lib/mfa/totp.ts says why).
  const { convert } = await import('html-to-text');
  return { ...headers, html, text: convert(html, { wordwrap: 78 }) };
}
