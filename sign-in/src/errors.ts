import { ApiError, fieldsOf } from './api.ts';
import { Invalid } from './checks.ts';
import { phrases } from './phrases.ts';

/** An error as the page says it: a sentence, and a list when there are several things to fix. */
export type Explained = { text: string; list?: string[] };

function issueSentence(issue: unknown): string {
  const { code, interpolation } = fieldsOf(issue);
  const sentence = typeof code === 'string' ? phrases.passwordIssues[code] : undefined;
  return sentence
    ? sentence(fieldsOf(interpolation))
    : phrases.errors.passwordNotAllowed(typeof code === 'string' ? code : phrases.errors.unknownReason);
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);

/** The API's message, made readable where it needs to be. */
export function explain(error: unknown): Explained {
  if (error instanceof Invalid) {
    return { text: error.message };
  }
  if (!(error instanceof ApiError)) {
    return { text: phrases.errors.page };
  }
  switch (error.code) {
    case 'network':
      return { text: phrases.errors.network };
    case 'password.rejected':
      return { text: phrases.errors.choosePassword, list: list(error.data.issues).map(issueSentence) };
    case 'session.not_found':
      return { text: phrases.errors.sessionNotFound };
    case 'session.sso_enabled':
      return { text: phrases.errors.ssoEnabled };
    // A connector that cannot be used (unreachable, not set up): the page's words, whatever the
    // server's message; what the IdP answered is in the operator's log.
    case 'connector.invalid_configuration':
      return { text: phrases.errors.connectorUnavailable };
    case 'user.missing_profile': {
      const names = list(error.data.missingProfile).map((item) => phrases.profile[String(item)] ?? String(item));
      return { text: names.length > 0 ? phrases.errors.alsoNeeds(names) : error.message };
    }
    case 'guard.invalid_input':
      return {
        text: phrases.errors.checkInput,
        list: [...new Set(error.details.map((detail) => String(detail.message)))],
      };
    default:
      break;
  }
  if (error.status >= 500) {
    return { text: phrases.errors.server };
  }
  if (error.status === 429 && !error.message) {
    return { text: phrases.errors.tooManyAttempts };
  }
  return { text: phrases.apiError(error.code) ?? (error.message || phrases.errors.failed(error.status)) };
}
