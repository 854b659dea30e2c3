import { useEffect, useState } from 'preact/hooks';

import { api } from './api.ts';
import { startExternal } from './flow.ts';
import { phrases } from './phrases.ts';
import { Action, Form, useForm } from './ui.tsx';

type Connector = { id: string; name: string };

/** A button per social connector of the public settings; nothing when there are none (or they cannot be read). */
export function Social() {
  const form = useForm();
  const [connectors, setConnectors] = useState<Connector[]>([]);
  useEffect(() => {
    api.settings().then(
      ({ socialConnectors }) =>
        setConnectors(socialConnectors.map(({ id, target, name }) => ({ id, name: name.en ?? target }))),
      () => undefined,
    );
  }, []);
  if (connectors.length === 0) {
    return null;
  }
  return (
    <section id="social" aria-label={phrases.signIn.otherWays}>
      <Form id="social-form" form={form}>
        {connectors.map((connector) => (
          <Action
            key={connector.id}
            class="secondary"
            onClick={() => void form.run(() => startExternal('social', connector.id))}
          >
            {phrases.signIn.continueWith(connector.name)}
          </Action>
        ))}
      </Form>
    </section>
  );
}
