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
    case 'session.mfa.require_mfa_verification':
    case 'user.missing_mfa':
      return { text: 'This account needs a second sign-in step (multi-factor authentication), which these pages do not offer yet. Contact your administrator.' };
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

/** Ends the interaction: the provider takes the browser back to the application. */
async function finish() {
  const result = await call('POST', '/submit');
  if (typeof result?.redirectTo !== 'string') {
    throw new Error('no redirect');
  }
  leaving = true;
  window.location.assign(result.redirectTo);
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

  onSubmit(
    passwordForm,
    async () => {
      const value = required(identifier, 'Enter your username or email address.');
      const secret = requiredPassword(password, 'Enter your password.');
      const type = value.includes('@') ? 'email' : 'username';
      await call('PUT', '', { interactionEvent: 'SignIn' });
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

const pages = { 'sign-in': signInPage, register: registerPage, 'reset-password': resetPasswordPage };
pages[document.body.dataset.page]?.();
