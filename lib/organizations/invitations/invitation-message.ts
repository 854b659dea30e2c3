import { RequestError } from '../../http/errors.ts';
import type { Connectors, MessageConnector } from '../../messages/index.ts';
import type { Queryable } from '../../storage/database.ts';
import { findUser } from '../../users/queries.ts';
import { getOrganization } from '../lookups.ts';
import type { Invitation, InvitationMessagePayload } from '../schemas.ts';

/** The email connector, or 501 `connector.not_found` (Logto's answer when no email connector is set up). */
export function invitationConnector(connectors: Connectors): MessageConnector {
  if (!connectors.email) {
    throw new RequestError('connector.not_found', { channel: 'email' });
  }
  return connectors.email;
}

/**
 * Emails the invitation to its invitee through the email connector, with Logto's template variables:
 * the caller's `link` (and `code`), the organization, and the inviter when there is one. Reads with
 * `db` and holds no transaction while the mail server answers. 502 `connector.general` when the
 * connector could not hand the message over.
 */
export async function sendInvitationMessage(
  db: Queryable,
  connectors: Connectors,
  invitation: Invitation,
  { link, code, locale }: InvitationMessagePayload,
): Promise<void> {
  const connector = invitationConnector(connectors);
  const organization = await getOrganization(db, invitation.organizationId);
  const inviter = invitation.inviterId ? await findUser(db, invitation.inviterId) : undefined;
  try {
    await connector.send({
      to: invitation.invitee,
      type: 'email',
      purpose: 'OrganizationInvitation',
      link,
      ...(code === undefined ? {} : { code }),
      ...(locale === undefined ? {} : { locale }),
      organization: {
        id: organization.id,
        name: organization.name,
        branding: organization.branding.logoUrl ? { logoUrl: organization.branding.logoUrl } : {},
      },
      ...(inviter && {
        inviter: {
          id: inviter.id,
          name: inviter.name,
          username: inviter.username,
          primaryEmail: inviter.primaryEmail,
        },
      }),
    });
  } catch (cause) {
    // Logged by the error handler (5xx) with what the mail server said, which the client does not see.
    throw new RequestError('connector.general', { cause });
  }
}
