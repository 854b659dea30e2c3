import { useEffect, useState } from 'preact/hooks';

import { api, type ConsentInfo } from '../api.ts';
import { leave } from '../flow.ts';
import { phrases } from '../phrases.ts';
import { Action, Form, useForm } from '../ui.tsx';

/**
 * The consent page (where /oidc/auth sends a signed-in person whom a third-party application, or
 * `prompt=consent`, asks for access): the application, who is signed in, what it asks for (profile
 * claims, staying signed in, each API's permissions under the API's name; and which of the person's
 * organizations it would see); Allow
 * records the grant, Cancel sends the application `access_denied`.
 */
export function ConsentPage() {
  const [info, setInfo] = useState<ConsentInfo>();
  const form = useForm();
  useEffect(() => {
    void form.run(async () => setInfo(await api.consentInfo()));
  }, []);
  const { user } = info ?? {};
  const who = user && (user.name ?? user.username ?? user.primaryEmail ?? user.primaryPhone);
  const asked = (info?.missingOIDCScope ?? []).map((scope) => phrases.consent.scopes[scope] ?? scope);
  const resources = info?.missingResourceScopes ?? [];
  return (
    <section id="consent" aria-labelledby="title">
      {info ? (
        <>
          <p id="consent-intro">{phrases.consent.wants(info.application.name)}</p>
          {info.application.clientIdHost && (
            <p id="consent-host" class="notice">
              <strong>{phrases.consent.sentBy(info.application.clientIdHost)}</strong>
            </p>
          )}
          {who && <p class="hint">{phrases.consent.signedInAs(who)}</p>}
          {asked.length > 0 || resources.length > 0 ? (
            <>
              <p>{phrases.consent.asksFor}</p>
              {asked.length > 0 && (
                <ul id="consent-scopes" class="scopes">
                  {asked.map((text) => (
                    <li key={text}>{text}</li>
                  ))}
                </ul>
              )}
              {/* Each API by its name, each permission by its description, its name beside it. */}
              {resources.map(({ resource, scopes }) => (
                <section key={resource.name} class="consent-resource" aria-label={resource.name}>
                  <p class="consent-resource-name">{phrases.consent.onResource(resource.name)}</p>
                  <ul class="scopes">
                    {scopes.map((scope) => (
                      <li key={scope.name}>
                        {scope.description ?? scope.name}
                        {scope.description && <code class="scope-name">{scope.name}</code>}
                      </li>
                    ))}
                  </ul>
                </section>
              ))}
            </>
          ) : (
            <p>{phrases.consent.nothing}</p>
          )}
          {info.organizations.length > 0 && (
            <>
              <p>{phrases.consent.organizations}</p>
              <ul id="consent-organizations" class="scopes">
                {info.organizations.map((organization) => (
                  <li key={organization.id}>{organization.name}</li>
                ))}
              </ul>
            </>
          )}
        </>
      ) : (
        !form.failure && <p class="hint">{phrases.consent.loading}</p>
      )}
      <Form
        id="consent-form"
        form={form}
        {...(info && {
          submit: { label: phrases.consent.allow, busy: phrases.consent.allowing },
          onSubmit: async () => leave((await api.consent()).redirectTo),
        })}
        actions={
          <Action class="secondary" onClick={() => void form.run(async () => leave((await api.deny()).redirectTo))}>
            {phrases.consent.deny}
          </Action>
        }
      />
    </section>
  );
}
