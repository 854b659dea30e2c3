import type { Context } from 'koa';
import type { Interaction } from 'oidc-provider';

import { findApplication } from '../../applications/queries.ts';
import type { MessageAbout } from '../../messages/index.ts';
import type { UserRow } from '../../users/queries.ts';
import type { ExperienceContext } from '../context.ts';
import { requestLanguage } from '../pages/page-language.ts';

/**
 * What a code sent during a sign-in says about it: the page's language (the email's too), the
 * application signed in to, and the user when the account is known (a second factor's code).
 */
export async function messageAbout(
  ctx: Context,
  context: Pick<ExperienceContext, 'db' | 'cache'>,
  interaction: Interaction,
  user?: Pick<UserRow, 'id' | 'username' | 'primary_email' | 'name'>,
): Promise<MessageAbout> {
  const { ui_locales: uiLocales, client_id: clientId } = interaction.params;
  const [{ language }, application] = await Promise.all([
    requestLanguage(ctx, context, typeof uiLocales === 'string' ? uiLocales : undefined),
    typeof clientId === 'string' ? findApplication(context.db, clientId) : undefined,
  ]);
  return {
    locale: language,
    ...(application && { application: { id: application.id, name: application.name } }),
    ...(user && {
      user: {
        id: user.id,
        username: user.username ?? undefined,
        primaryEmail: user.primary_email ?? undefined,
        name: user.name ?? undefined,
      },
    }),
  };
}
