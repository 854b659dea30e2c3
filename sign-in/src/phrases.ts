/**
 * Every text the hosted pages show, in one table: components name a phrase, they never spell a
 * sentence. A phrase that says something the user typed is a function of it. (Other languages
 * become other tables of this shape.)
 */

const characters = (count: number) => `${count} character${count === 1 ? '' : 's'}`;

/** What a code step says: `sentTo` and `sentAgainTo` name the address. */
export type CodePhrases = {
  intro: string;
  sentTo: (address: string) => string;
  sentAgainTo: (address: string) => string;
  verify: string;
  verifying: string;
};

export const phrases = {
  titles: {
    'sign-in': 'Sign in',
    register: 'Create an account',
    'reset-password': 'Reset your password',
    callback: 'Signing in',
    consent: 'Allow access?',
  },
  brand: {
    signInTo: (application: string) => `Sign in to ${application}`,
    logoOf: (application: string) => `${application} logo`,
    legal: 'Legal',
    terms: 'Terms of use',
    privacy: 'Privacy policy',
  },
  consent: {
    wants: (application: string) => `${application} wants to access your account.`,
    signedInAs: (who: string) => `You are signed in as ${who}.`,
    asksFor: 'It asks to:',
    scopes: {
      profile: 'See your name, username and picture',
      email: 'See your email address',
      phone: 'See your phone number',
      'urn:logto:scope:organizations': 'See the organizations you belong to',
    } as Partial<Record<string, string>>,
    organizations: 'Your organizations it will see:',
    resourceScope: (resource: string, scope: string) => `${scope} on ${resource}`,
    nothing: 'It asks for nothing beyond knowing who you are.',
    allow: 'Allow',
    allowing: 'Allowing…',
    deny: 'Cancel',
    loading: 'Loading what the application asks for…',
  },
  signIn: {
    identifier: 'Username or email',
    password: 'Password',
    submit: 'Sign in',
    submitting: 'Signing in…',
    forgotPassword: 'Forgot your password?',
    useCode: 'Sign in with an email code instead',
    usePassword: 'Sign in with a password instead',
    noAccount: 'No account yet?',
    register: 'Create one',
    otherWays: 'Other ways to sign in',
    continueWith: (name: string) => `Continue with ${name}`,
  },
  passkeySignIn: {
    label: 'Sign in with a passkey',
    waiting: 'Waiting for your passkey…',
    notRecognised:
      'This passkey is not registered for an account here. Sign in another way, then add the passkey to your account.',
    notUsed: 'No passkey was used. Try again, or sign in another way.',
  },
  signInCode: {
    intro: 'We will email you a 6-digit code to sign in with.',
    sentTo: (email) => `We sent a 6-digit code to ${email}. It can take a minute to arrive.`,
    sentAgainTo: (email) => `We sent a new 6-digit code to ${email}.`,
    verify: 'Sign in',
    verifying: 'Signing in…',
  } satisfies CodePhrases,
  resetCode: {
    intro: 'Enter the email address of your account and we will send it a 6-digit code.',
    sentTo: (email) => `If an account uses ${email}, we sent it a 6-digit code. It can take a minute to arrive.`,
    sentAgainTo: (email) => `If an account uses ${email}, we sent it a new 6-digit code.`,
    verify: 'Continue',
    verifying: 'Checking…',
  } satisfies CodePhrases,
  code: {
    send: 'Send code',
    sending: 'Sending…',
    code: '6-digit code',
    sendAgain: 'Send a new code',
    email: {
      label: 'Email',
      other: 'Use another email',
      invalidCode: 'Enter the 6-digit code from the email.',
    },
    phone: {
      label: 'Phone number',
      other: 'Use another phone number',
      invalidCode: 'Enter the 6-digit code from the text message.',
    },
  },
  register: {
    username: 'Username',
    usernameHint: 'Letters, digits and underscores; it starts with a letter or an underscore.',
    password: 'Password',
    passwordHint: 'Make it long, leave out your username, and avoid runs like “aaa” or “123”.',
    confirm: 'Confirm password',
    submit: 'Create account',
    submitting: 'Creating your account…',
    haveAccount: 'Already have an account?',
    signIn: 'Sign in',
  },
  resetPassword: {
    password: 'New password',
    passwordHint: 'Make it long and different from your old password.',
    confirm: 'Confirm new password',
    submit: 'Save new password',
    submitting: 'Saving…',
    done: 'Password changed. You can now sign in with your new password.',
    backToSignIn: 'Back to sign in',
  },
  callback: {
    finishing: 'Finishing your sign-in…',
    notStartedHere: 'This sign-in was not started here, or has expired. Go back to the application and sign in again.',
    linkOffer: (account: string) => ({
      before: 'An account already uses ',
      account,
      after: '. Link this sign-in to it?',
    }),
    link: 'Link to my account',
    linking: 'Linking…',
    newAccount: 'Create a new account instead',
    backToSignIn: 'Back to sign-in',
  },
  completeProfile: {
    title: 'Complete your account',
    intro: (needs: string[]) => `Before you continue, your account needs ${needs.join(' and ')}.`,
    either: (names: string[]) => names.join(' or '),
    username: 'Username',
    password: 'Password',
    confirm: 'Confirm password',
    submit: 'Continue',
    submitting: 'Saving…',
    useInstead: (name: string) => `Use ${name} instead`,
    email: {
      intro: 'We will email you a 6-digit code to check that the address is yours.',
      sentTo: (email) => `We sent a 6-digit code to ${email}. It can take a minute to arrive.`,
      sentAgainTo: (email) => `We sent a new 6-digit code to ${email}.`,
      verify: 'Continue',
      verifying: 'Checking…',
    } satisfies CodePhrases,
    phone: {
      intro: 'We will text you a 6-digit code to check that the number is yours.',
      sentTo: (phone) => `We sent a 6-digit code to ${phone}. It can take a minute to arrive.`,
      sentAgainTo: (phone) => `We sent a new 6-digit code to ${phone}.`,
      verify: 'Continue',
      verifying: 'Checking…',
    } satisfies CodePhrases,
  },
  mfa: {
    verifyTitle: 'Two-step verification',
    appCode: 'Code from your authenticator app',
    backupCode: 'Backup code',
    verify: 'Verify',
    verifying: 'Verifying…',
    useBackupCode: 'Use a backup code instead',
    useApp: 'Use your authenticator app instead',
    yourEmail: 'your email',
    yourPhone: 'your phone',
    sendCodeTo: (to: string) => `Send a code to ${to}`,
    sendCodeInstead: (to: string) => `Send a code to ${to} instead`,
    sending: 'Sending…',
    sentTo: (to: string) => `We sent a 6-digit code to ${to}.`,
    sentCode: '6-digit code',
    sendAgain: 'Send a new code',
    enrolTitle: 'Set up two-step verification',
    enrolIntro:
      'Scan this code with an authenticator app (or type the key in it), then enter the 6-digit code it shows.',
    qrCode: 'QR code for your authenticator app',
    key: 'Key: ',
    enrolCode: '6-digit code from the app',
    turnOn: 'Turn on',
    turningOn: 'Turning on…',
    notNow: 'Not now',
    backupTitle: 'Save your backup codes',
    backupIntro:
      'Each code signs you in once if you lose your authenticator. Keep them somewhere safe: they are shown only now.',
    saved: 'I have saved these codes',
    saving: 'Saving…',
  },
  invalid: {
    identifier: 'Enter your username or email address.',
    password: 'Enter your password.',
    email: 'Enter your email address.',
    emailShape: 'Enter an email address like name@example.com.',
    phone: 'Enter your phone number.',
    phoneShape: 'Enter the phone number with its country code, like +1 555 010 0123.',
    username: 'Choose a username.',
    usernameShape: 'A username holds only letters, digits and underscores, and starts with a letter or an underscore.',
    newPassword: 'Choose a password.',
    mismatch: 'The two passwords do not match. Type the same password twice.',
    appCode: 'Enter the 6-digit code from your authenticator app.',
    backupCode: 'Enter one of your 10-character backup codes.',
    sentCode: 'Enter the 6-digit code we sent you.',
  },
  errors: {
    network: 'The server could not be reached. Check your connection and try again.',
    page: 'Something went wrong on this page. Reload it and try again.',
    server: 'Something went wrong on our side. Try again in a moment.',
    tooManyAttempts: 'Too many attempts. Wait a few minutes and try again.',
    failed: (status: number) => `The request failed (HTTP ${status}). Try again.`,
    sessionNotFound:
      'This sign-in has expired or was not started from an application. Go back to the application and sign in again.',
    ssoEnabled: 'This email signs in through your organization’s single sign-on.',
    connectorUnavailable:
      'Signing in with this provider is not available right now. Try again later, or sign in another way.',
    alsoNeeds: (message: string, names: string[]) => `${message} This service also needs ${names.join(' and ')}.`,
    checkInput: 'Check what you entered.',
    choosePassword: 'Choose another password:',
    passwordNotAllowed: (code: string) => `This password is not allowed (${code}).`,
  },
  /** What the account still needs (`user.missing_profile`), by the API's profile names. */
  profile: {
    username: 'a username',
    email: 'an email address',
    phone: 'a phone number',
    password: 'a password',
  } as Record<string, string>,
  /** Why a password was refused, by the API's issue codes (`password.rejected`). */
  passwordIssues: {
    'password_rejected.too_short': ({ min }) => `Use at least ${characters(Number(min))}.`,
    'password_rejected.too_long': ({ max }) => `Use at most ${characters(Number(max))}.`,
    'password_rejected.character_types': ({ min }) =>
      `Mix at least ${String(min)} kinds of characters: lowercase letters, uppercase letters, digits and symbols.`,
    'password_rejected.repetition_or_sequence': () =>
      'Avoid a character repeated three times in a row (like “aaa”) and runs of three (like “abc” or “321”).',
    'password_rejected.restricted.user_info': () => 'Leave out your username, email address, phone number and name.',
    'password_rejected.restricted.words': () => 'Leave out the words this service does not allow in passwords.',
    'password_rejected.pwned': () => 'This password has appeared in a data breach: choose another one.',
  } as Record<string, (interpolation: Record<string, unknown>) => string>,
};
