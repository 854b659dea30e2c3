// The hosted sign-in pages: sign-in, registration and password reset over the Experience API
// (/api/experience, authenticated by the provider's `_interaction` cookie). One module for the
// three pages, no framework, no build step; the page says which it is in <body data-page>.

const base = '/api/experience';

/** An answer of the API other than 2xx: `{code, message, data?, details?}`. */
class ApiError extends Error {
  constructor(status, body) {
    super(typeof body?.message === 'string' ? body.message : '');
    this.status = status;
    this.code = typeof body?.code === 'string' ? body.code : '';
    this.data = body?.data;
    this.details = body?.details;
  }
}

/** What the user typed is not usable: said next to the form, focus on `field`. */
class Invalid extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

async function call(method, path, body) {
  let response;
  try {
    response = await fetch(base + path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, { code: 'network', message: 'The server could not be reached. Check your connection and try again.' });
  }
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    throw new ApiError(response.status, parsed);
  }
  return parsed;
}

// ---- Error messages -------------------------------------------------------------------------

const characters = (count) => `${count} character${count === 1 ? '' : 's'}`;

const passwordIssues = {
  'password_rejected.too_short': ({ min }) => `Use at least ${characters(min)}.`,
  'password_rejected.too_long': ({ max }) => `Use at most ${characters(max)}.`,
  'password_rejected.character_types': ({ min }) =>
    `Mix at least ${min} kinds of characters: lowercase letters, uppercase letters, digits and symbols.`,
  'password_rejected.repetition_or_sequence': () =>
    'Avoid a character repeated three times in a row (like “aaa”) and runs of three (like “abc” or “321”).',
  'password_rejected.restricted.user_info': () => 'Leave out your username, email address, phone number and name.',
  'password_rejected.restricted.words': () => 'Leave out the words this service does not allow in passwords.',
  'password_rejected.pwned': () => 'This password has appeared in a data breach: choose another one.',
};

function issueSentence(issue) {
  const sentence = passwordIssues[issue?.code];
  return sentence ? sentence(issue.interpolation ?? {}) : `This password is not allowed (${String(issue?.code ?? 'unknown reason')}).`;
}

const profileNames = { username: 'a username', email: 'an email address', phone: 'a phone number', password: 'a password' };

/** `{text, list?}` for an error: the API's message, made readable where it needs to be. */
function explain(error) {
  if (error instanceof Invalid) {
    return { text: error.message };
  }
  if (!(error instanceof ApiError)) {
    return { text: 'Something went wrong on this page. Reload it and try again.' };
  }
  switch (error.code) {
    case 'password.rejected': {
      const issues = Array.isArray(error.data?.issues) ? error.data.issues : [];
      return { text: 'Choose another password:', list: issues.map(issueSentence) };
    }
    case 'session.not_found':
      return { text: 'This sign-in has expired or was not started from an application. Go back to the application and sign in again.' };
    case 'session.sso_enabled':
      return { text: 'This email signs in through your organization’s single sign-on.' };
    case 'user.missing_profile': {
      const missing = Array.isArray(error.data?.missingProfile) ? error.data.missingProfile : [];
      const names = missing.map((item) => profileNames[item] ?? String(item));
      return { text: names.length > 0 ? `${error.message} This service also needs ${names.join(' and ')}.` : error.message };
    }
    case 'guard.invalid_input': {
      const problems = Array.isArray(error.details) ? [...new Set(error.details.map((detail) => String(detail.message)))] : [];
      return { text: 'Check what you entered.', list: problems };
    }
    default:
      break;
  }
  if (error.status >= 500) {
    return { text: 'Something went wrong on our side. Try again in a moment.' };
  }
  if (error.status === 429 && !error.message) {
    return { text: 'Too many attempts. Wait a few minutes and try again.' };
  }
  return { text: error.message || `The request failed (HTTP ${error.status}). Try again.` };
}

// ---- Forms --------------------------------------------------------------------------------

const byId = (id) => document.getElementById(id);
let leaving = false;

function clearError(form) {
  form.querySelector('[data-error]').replaceChildren();
  for (const input of form.querySelectorAll('input[aria-invalid]')) {
    input.removeAttribute('aria-invalid');
    input.setAttribute('aria-describedby', input.dataset.describedby ?? '');
    if (!input.getAttribute('aria-describedby')) {
      input.removeAttribute('aria-describedby');
    }
  }
}

function showError(form, message, field) {
  clearError(form);
  const region = form.querySelector('[data-error]');
  region.id ||= `${form.id}-error`;
  const paragraph = document.createElement('p');
  paragraph.textContent = message.text;
  region.append(paragraph);
  if (message.list?.length) {
    const list = document.createElement('ul');
    for (const item of message.list) {
      const entry = document.createElement('li');
      entry.textContent = item;
      list.append(entry);
    }
    region.append(list);
  }
  const target = field ?? form.querySelector('input');
  if (target) {
    target.setAttribute('aria-invalid', 'true');
    target.dataset.describedby = target.getAttribute('aria-describedby') ?? '';
    target.setAttribute('aria-describedby', `${target.dataset.describedby} ${region.id}`.trim());
    target.focus();
    target.select?.();
  }
}

/** Runs `task` with the form's buttons disabled; an error is shown next to the form. */
async function run(form, task, fieldFor = () => undefined) {
  if (form.getAttribute('aria-busy') === 'true') {
    return;
  }
  const buttons = [...form.querySelectorAll('button')];
  const submit = form.querySelector('button[type="submit"]');
  const label = submit?.textContent;
  form.setAttribute('aria-busy', 'true');
  for (const button of buttons) {
    button.disabled = true;
  }
  if (submit?.dataset.busy) {
    submit.textContent = submit.dataset.busy;
  }
  clearError(form);
  try {
    await task();
  } catch (error) {
    showError(form, explain(error), error instanceof Invalid ? error.field : fieldFor(error));
  } finally {
    if (!leaving) {
      form.removeAttribute('aria-busy');
      for (const button of buttons) {
        button.disabled = false;
      }
      if (submit && label !== undefined) {
        submit.textContent = label;
      }
    }
  }
}

function onSubmit(form, task, fieldFor) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void run(form, task, fieldFor);
  });
}

function required(input, message) {
  const value = input.value.trim();
  if (!value) {
    throw new Invalid(input, message);
  }
  return value;
}

function requiredPassword(input, message) {
  if (!input.value) {
    throw new Invalid(input, message);
  }
  return input.value;
}

function requiredEmail(input) {
  const value = required(input, 'Enter your email address.');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
    throw new Invalid(input, 'Enter an email address like name@example.com.');
  }
  return value;
}

function requiredCode(input) {
  const value = input.value.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(value)) {
    throw new Invalid(input, 'Enter the 6-digit code from the email.');
  }
  return value;
}

function requiredNewPassword(password, confirm) {
  const value = requiredPassword(password, 'Choose a password.');
  if (confirm.value !== value) {
    throw new Invalid(confirm, 'The two passwords do not match. Type the same password twice.');
  }
  return value;
}

/** What the submit asks for before it lets the user in: a second factor to prove, or to set up. */
const secondFactorCodes = new Set(['session.mfa.require_mfa_verification', 'user.missing_mfa', 'session.mfa.backup_code_required']);

/**
 * Ends the interaction: the provider takes the browser back to the application. If the account
 * owes a second factor, the page turns to it, and that step calls `finish` again.
 */
async function finish() {
  let result;
  try {
    result = await call('POST', '/submit');
  } catch (error) {
    if (error instanceof ApiError && secondFactorCodes.has(error.code)) {
      await secondFactor(error);
      return;
    }
    throw error;
  }
  if (typeof result?.redirectTo !== 'string') {
    throw new Error('no redirect');
  }
  leaving = true;
  window.location.assign(result.redirectTo);
}

// ---- Second factor (MFA) ---------------------------------------------------------------------

// The same steps follow a sign-in, a registration or an external sign-in, so the markup is added
// here once rather than repeated in each page. It is static: nothing the user typed goes in it.
const secondFactorMarkup = `
<section id="mfa-verify" hidden aria-labelledby="mfa-verify-title">
  <h2 id="mfa-verify-title" tabindex="-1">Two-step verification</h2>
  <form id="mfa-verify-form" novalidate>
    <div class="field">
      <label for="mfa-code" data-label>Code from your authenticator app</label>
      <input id="mfa-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="11" required>
    </div>
    <div class="error" data-error aria-live="assertive" aria-atomic="true"></div>
    <button type="submit" class="primary" data-busy="Verifying…">Verify</button>
    <button type="button" class="link" data-action="switch" hidden>Use a backup code instead</button>
  </form>
</section>
<section id="mfa-enrol" hidden aria-labelledby="mfa-enrol-title">
  <h2 id="mfa-enrol-title" tabindex="-1">Set up two-step verification</h2>
  <p class="hint">Scan this code with an authenticator app (or type the key in it), then enter the 6-digit code it shows.</p>
  <img class="qr" data-qr alt="QR code for your authenticator app" width="200" height="200">
  <p class="hint">Key: <code data-secret></code></p>
  <form id="mfa-enrol-form" novalidate>
    <div class="field">
      <label for="mfa-enrol-code">6-digit code from the app</label>
      <input id="mfa-enrol-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required>
    </div>
    <div class="error" data-error aria-live="assertive" aria-atomic="true"></div>
    <button type="submit" class="primary" data-busy="Turning on…">Turn on</button>
    <button type="button" class="secondary" data-action="skip" hidden>Not now</button>
  </form>
</section>
<section id="mfa-backup" hidden aria-labelledby="mfa-backup-title">
  <h2 id="mfa-backup-title" tabindex="-1">Save your backup codes</h2>
  <p class="hint">Each code signs you in once if you lose your authenticator. Keep them somewhere safe: they are shown only now.</p>
  <ul class="codes" data-codes></ul>
  <form id="mfa-backup-form" novalidate>
    <div class="error" data-error aria-live="assertive" aria-atomic="true"></div>
    <button type="submit" class="primary" data-busy="Saving…">I have saved these codes</button>
  </form>
</section>`;

/** Shows only `section` of the card (the other steps and the footer are hidden). */
function showOnly(section, focus) {
  for (const element of document.querySelectorAll('main > section, main > form, main > .footer, #callback-status')) {
    element.hidden = element !== section;
  }
  section.hidden = false;
  focus?.focus();
}

let secondFactorReady = false;

function secondFactorSections() {
  if (!secondFactorReady) {
    document.querySelector('main').insertAdjacentHTML('beforeend', secondFactorMarkup);
    secondFactorReady = true;
    wireSecondFactor();
  }
  return { verify: byId('mfa-verify'), enrol: byId('mfa-enrol'), backup: byId('mfa-backup') };
}

const mfaState = { useBackupCode: false, enrolmentId: '', backupId: '' };

function wireSecondFactor() {
  const verifyForm = byId('mfa-verify-form');
  const code = byId('mfa-code');
  const switcher = verifyForm.querySelector('[data-action="switch"]');
  switcher.addEventListener('click', () => {
    mfaState.useBackupCode = !mfaState.useBackupCode;
    verifyForm.querySelector('[data-label]').textContent = mfaState.useBackupCode ? 'Backup code' : 'Code from your authenticator app';
    switcher.textContent = mfaState.useBackupCode ? 'Use your authenticator app instead' : 'Use a backup code instead';
    code.inputMode = mfaState.useBackupCode ? 'text' : 'numeric';
    code.value = '';
    clearError(verifyForm);
    code.focus();
  });
  onSubmit(
    verifyForm,
    async () => {
      const value = code.value.replace(/\s+/g, '');
      if (mfaState.useBackupCode ? !/^[0-9a-f]{10}$/i.test(value) : !/^\d{6}$/.test(value)) {
        throw new Invalid(code, mfaState.useBackupCode ? 'Enter one of your 10-character backup codes.' : 'Enter the 6-digit code from your authenticator app.');
      }
      await call('POST', mfaState.useBackupCode ? '/verification/backup-code/verify' : '/verification/totp/verify', { code: value });
      await finish();
    },
    () => code,
  );

  const enrolForm = byId('mfa-enrol-form');
  const enrolCode = byId('mfa-enrol-code');
  onSubmit(
    enrolForm,
    async () => {
      const value = enrolCode.value.replace(/\s+/g, '');
      if (!/^\d{6}$/.test(value)) {
        throw new Invalid(enrolCode, 'Enter the 6-digit code from your authenticator app.');
      }
      await call('POST', '/verification/totp/verify', { code: value, verificationId: mfaState.enrolmentId });
      await call('POST', '/profile/mfa', { type: 'Totp', verificationId: mfaState.enrolmentId });
      await finish();
    },
    () => enrolCode,
  );
  enrolForm.querySelector('[data-action="skip"]').addEventListener('click', () =>
    run(enrolForm, async () => {
      await call('POST', '/profile/mfa/mfa-skipped');
      await finish();
    }),
  );

  onSubmit(byId('mfa-backup-form'), async () => {
    await call('POST', '/profile/mfa', { type: 'BackupCode', verificationId: mfaState.backupId });
    await finish();
  });
}

/** Turns the page to what the submit asked for. */
async function secondFactor(error) {
  const sections = secondFactorSections();
  const factors = Array.isArray(error.data?.availableFactors) ? error.data.availableFactors : [];
  if (error.code === 'session.mfa.require_mfa_verification') {
    mfaState.useBackupCode = !factors.includes('Totp');
    const form = byId('mfa-verify-form');
    form.querySelector('[data-label]').textContent = mfaState.useBackupCode ? 'Backup code' : 'Code from your authenticator app';
    form.querySelector('[data-action="switch"]').hidden = !(factors.includes('Totp') && factors.includes('BackupCode'));
    showOnly(sections.verify, byId('mfa-code'));
    return;
  }
  if (error.code === 'user.missing_mfa') {
    const { verificationId, secret, secretQrCode } = await call('POST', '/verification/totp/secret');
    mfaState.enrolmentId = verificationId;
    sections.enrol.querySelector('[data-qr]').src = secretQrCode;
    sections.enrol.querySelector('[data-secret]').textContent = secret;
    sections.enrol.querySelector('[data-action="skip"]').hidden = error.data?.skippable !== true;
    showOnly(sections.enrol, byId('mfa-enrol-code'));
    return;
  }
  const { verificationId, codes } = await call('POST', '/verification/backup-code/generate');
  mfaState.backupId = verificationId;
  sections.backup.querySelector('[data-codes]').replaceChildren(
    ...codes.map((value) => {
      const item = document.createElement('li');
      item.textContent = value;
      return item;
    }),
  );
  showOnly(sections.backup, byId('mfa-backup-title'));
}

// ---- Social and enterprise sign-in --------------------------------------------------------------

const externalKey = 'experience.external';

/** Sends the browser to a connector's IdP; the callback page picks up from what is kept here. */
async function startExternal(kind, connectorId) {
  const state = crypto.randomUUID();
  const redirectUri = `${window.location.origin}/callback/${kind === 'sso' ? 'sso/' : ''}${encodeURIComponent(connectorId)}`;
  await call('PUT', '', { interactionEvent: 'SignIn' });
  const { authorizationUri, verificationId } = await call('POST', `/verification/${kind}/${encodeURIComponent(connectorId)}/authorization-uri`, {
    state,
    redirectUri,
  });
  sessionStorage.setItem(externalKey, JSON.stringify({ kind, connectorId, state, verificationId }));
  leaving = true;
  window.location.assign(authorizationUri);
}

/** The social buttons, from the public settings. */
async function offerSocial(container) {
  let settings;
  try {
    settings = await fetch('/api/.well-known/sign-in-exp', { headers: { accept: 'application/json' } }).then((response) => response.json());
  } catch {
    return;
  }
  const connectors = Array.isArray(settings?.socialConnectors) ? settings.socialConnectors : [];
  if (connectors.length === 0) {
    return;
  }
  const form = document.createElement('form');
  form.id = 'social-form';
  form.noValidate = true;
  for (const connector of connectors) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.textContent = `Continue with ${connector.name?.en ?? connector.target}`;
    button.addEventListener('click', () => run(form, () => startExternal('social', connector.id)));
    form.append(button);
  }
  const error = document.createElement('div');
  error.className = 'error';
  error.dataset.error = '';
  error.setAttribute('aria-live', 'assertive');
  form.append(error);
  container.replaceChildren(form);
  container.hidden = false;
}

function show(element, focus) {
  element.hidden = false;
  focus?.focus();
}

/** Sends a code to `email` for `interactionEvent`; returns the verification id. */
async function sendCode(email, interactionEvent) {
  const { verificationId } = await call('POST', '/verification/verification-code', {
    identifier: { type: 'email', value: email },
    interactionEvent,
  });
  return verificationId;
}

const verifyCode = (email, verificationId, code) =>
  call('POST', '/verification/verification-code/verify', { identifier: { type: 'email', value: email }, verificationId, code });

// ---- Pages --------------------------------------------------------------------------------

function signInPage() {
  const passwordStep = byId('password-step');
  const codeStep = byId('code-step');
  const passwordForm = byId('password-form');
  const identifier = byId('identifier');
  const password = byId('password');
  const sendForm = byId('code-send-form');
  const verifyForm = byId('code-verify-form');
  const email = byId('code-email');
  const codeInput = byId('code');
  const sentTo = verifyForm.querySelector('[data-sent-to]');
  const pending = { email: '', verificationId: '' };
  void offerSocial(byId('social'));

  onSubmit(
    passwordForm,
    async () => {
      const value = required(identifier, 'Enter your username or email address.');
      const secret = requiredPassword(password, 'Enter your password.');
      const type = value.includes('@') ? 'email' : 'username';
      await call('PUT', '', { interactionEvent: 'SignIn' });
      if (type === 'email') {
        const { connectorIds } = await call('GET', `/sso-connectors?email=${encodeURIComponent(value)}`);
        if (connectorIds.length > 0) {
          await startExternal('sso', connectorIds[0]);
          return;
        }
      }
      const { verificationId } = await call('POST', '/verification/password', { identifier: { type, value }, password: secret });
      await call('POST', '/identification', { verificationId });
      await finish();
    },
    (error) => (error.code === 'session.invalid_credentials' ? password : identifier),
  );

  byId('use-code').addEventListener('click', () => {
    if (!email.value && identifier.value.includes('@')) {
      email.value = identifier.value.trim();
    }
    passwordStep.hidden = true;
    show(codeStep, verifyForm.hidden ? email : codeInput);
  });
  byId('use-password').addEventListener('click', () => {
    codeStep.hidden = true;
    show(passwordStep, identifier);
  });

  onSubmit(sendForm, async () => {
    const value = requiredEmail(email);
    await call('PUT', '', { interactionEvent: 'SignIn' });
    pending.verificationId = await sendCode(value, 'SignIn');
    pending.email = value;
    sentTo.textContent = `We sent a 6-digit code to ${value}. It can take a minute to arrive.`;
    codeInput.value = '';
    sendForm.hidden = true;
    show(verifyForm, codeInput);
  });

  onSubmit(
    verifyForm,
    async () => {
      const code = requiredCode(codeInput);
      await verifyCode(pending.email, pending.verificationId, code);
      await call('POST', '/identification', { verificationId: pending.verificationId });
      await finish();
    },
    () => codeInput,
  );

  verifyForm.querySelector('[data-action="resend"]').addEventListener('click', () =>
    run(verifyForm, async () => {
      pending.verificationId = await sendCode(pending.email, 'SignIn');
      sentTo.textContent = `We sent a new 6-digit code to ${pending.email}.`;
      codeInput.value = '';
      codeInput.focus();
    }),
  );
  verifyForm.querySelector('[data-action="change-email"]').addEventListener('click', () => {
    clearError(verifyForm);
    verifyForm.hidden = true;
    show(sendForm, email);
  });
}

function registerPage() {
  const form = byId('register-form');
  const username = byId('username');
  const password = byId('new-password');
  const confirm = byId('confirm-password');

  onSubmit(
    form,
    async () => {
      const name = required(username, 'Choose a username.');
      if (!/^[A-Z_a-z]\w{0,127}$/.test(name)) {
        throw new Invalid(username, 'A username holds only letters, digits and underscores, and starts with a letter or an underscore.');
      }
      const secret = requiredNewPassword(password, confirm);
      await call('PUT', '', { interactionEvent: 'Register' });
      const { verificationId } = await call('POST', '/verification/new-password-identity', {
        identifier: { type: 'username', value: name },
        password: secret,
      });
      await call('POST', '/identification', { verificationId });
      await finish();
    },
    (error) => (error.code === 'password.rejected' ? password : username),
  );
}

function resetPasswordPage() {
  const sendForm = byId('reset-send-form');
  const verifyForm = byId('reset-verify-form');
  const passwordForm = byId('reset-password-form');
  const done = byId('reset-done');
  const email = byId('reset-email');
  const codeInput = byId('reset-code');
  const password = byId('reset-new-password');
  const confirm = byId('reset-confirm-password');
  const sentTo = verifyForm.querySelector('[data-sent-to]');
  const pending = { email: '', verificationId: '' };

  onSubmit(sendForm, async () => {
    const value = requiredEmail(email);
    await call('PUT', '', { interactionEvent: 'ForgotPassword' });
    pending.verificationId = await sendCode(value, 'ForgotPassword');
    pending.email = value;
    sentTo.textContent = `If an account uses ${value}, we sent it a 6-digit code. It can take a minute to arrive.`;
    codeInput.value = '';
    sendForm.hidden = true;
    show(verifyForm, codeInput);
  });

  onSubmit(
    verifyForm,
    async () => {
      const code = requiredCode(codeInput);
      await verifyCode(pending.email, pending.verificationId, code);
      await call('POST', '/identification', { verificationId: pending.verificationId });
      verifyForm.hidden = true;
      show(passwordForm, password);
    },
    () => codeInput,
  );

  verifyForm.querySelector('[data-action="resend"]').addEventListener('click', () =>
    run(verifyForm, async () => {
      pending.verificationId = await sendCode(pending.email, 'ForgotPassword');
      sentTo.textContent = `If an account uses ${pending.email}, we sent it a new 6-digit code.`;
      codeInput.value = '';
      codeInput.focus();
    }),
  );
  verifyForm.querySelector('[data-action="change-email"]').addEventListener('click', () => {
    clearError(verifyForm);
    verifyForm.hidden = true;
    show(sendForm, email);
  });

  onSubmit(
    passwordForm,
    async () => {
      const secret = requiredNewPassword(password, confirm);
      await call('PUT', '/profile/password', { password: secret });
      await call('POST', '/submit');
      passwordForm.hidden = true;
      document.querySelector('[data-footer]').hidden = true;
      show(done, byId('reset-done-message'));
    },
    () => password,
  );
}

/** Back from a connector's IdP: redeem the callback, then sign in, register, or offer to link. */
function callbackPage() {
  const status = byId('callback-status');
  const linkForm = byId('link-form');
  const fail = (message) => {
    status.textContent = message;
    status.className = 'error';
    status.focus();
  };
  let started;
  try {
    started = JSON.parse(sessionStorage.getItem(externalKey) ?? 'null');
  } catch {
    started = null;
  }
  const query = new URLSearchParams(window.location.search);
  if (!started || query.get('state') !== started.state) {
    fail('This sign-in was not started here, or has expired. Go back to the application and sign in again.');
    return;
  }
  sessionStorage.removeItem(externalKey);
  const { kind, connectorId, verificationId } = started;

  const registerInstead = async () => {
    await call('PUT', '/interaction-event', { interactionEvent: 'Register' });
    await call('POST', '/identification', { verificationId });
    await finish();
  };

  const identify = async () => {
    try {
      await call('POST', '/identification', { verificationId });
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'user.identity_not_exist') {
        throw error;
      }
      if (typeof error.data?.relatedUser === 'string') {
        linkForm.querySelector('[data-related]').textContent = error.data.relatedUser;
        status.hidden = true;
        show(linkForm, linkForm.querySelector('button[type="submit"]'));
        return;
      }
      // Nobody has this identity and nobody has its email: a new account.
      await registerInstead();
      return;
    }
    await finish();
  };

  onSubmit(linkForm, async () => {
    await call('POST', '/identification', { verificationId, linkSocialIdentity: true });
    await finish();
  });
  linkForm.querySelector('[data-action="new-account"]').addEventListener('click', () => run(linkForm, registerInstead));

  void (async () => {
    try {
      await call('POST', `/verification/${kind}/${encodeURIComponent(connectorId)}/verify`, {
        connectorData: Object.fromEntries(query),
        verificationId,
      });
      await identify();
    } catch (error) {
      if (!leaving) {
        fail(explain(error).text);
      }
    }
  })();
}

const pages = { 'sign-in': signInPage, register: registerPage, 'reset-password': resetPasswordPage, callback: callbackPage };
pages[document.body.dataset.page]?.();
