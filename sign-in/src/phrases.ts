import { all, either, t } from './i18n.ts';

/**
 * Every text the hosted pages show, in one table: components name a phrase, they never spell a
 * sentence. A phrase that says something the user typed is a function of it. The texts are the
 * catalogue's (lib/shared/phrases/), in the page's language (i18n.ts).
 */

/** What a code step says: `sentTo` and `sentAgainTo` name the address. */
export type CodePhrases = {
  intro: string;
  sentTo: (address: string) => string;
  sentAgainTo: (address: string) => string;
  verify: string;
  verifying: string;
};

type CodeStep = 'signInCode' | 'resetCode' | 'completeProfile.email' | 'completeProfile.phone';
const codePhrases = (step: CodeStep): CodePhrases => ({
  intro: t(`${step}.intro`),
  sentTo: (address) => t(`${step}.sentTo`, { address }),
  sentAgainTo: (address) => t(`${step}.sentAgainTo`, { address }),
  verify: t(`${step}.verify`),
  verifying: t(`${step}.verifying`),
});

export const phrases = {
  titles: {
    'sign-in': t('titles.signIn'),
    register: t('titles.register'),
    'reset-password': t('titles.resetPassword'),
    callback: t('titles.callback'),
    consent: t('titles.consent'),
  },
  brand: {
    signInTo: (application: string) => t('brand.signInTo', { application }),
    logoOf: (application: string) => t('brand.logoOf', { application }),
    legal: t('brand.legal'),
    terms: t('brand.terms'),
    privacy: t('brand.privacy'),
  },
  consent: {
    wants: (application: string) => t('consent.wants', { application }),
    sentBy: (host: string) => t('consent.sentBy', { host }),
    signedInAs: (who: string) => t('consent.signedInAs', { who }),
    asksFor: t('consent.asksFor'),
    scopes: {
      profile: t('consent.scopes.profile'),
      email: t('consent.scopes.email'),
      phone: t('consent.scopes.phone'),
      'urn:logto:scope:organizations': t('consent.scopes.organizations'),
    } as Partial<Record<string, string>>,
    organizations: t('consent.organizations'),
    resourceScope: (resource: string, scope: string) => t('consent.resourceScope', { resource, scope }),
    nothing: t('consent.nothing'),
    allow: t('consent.allow'),
    allowing: t('consent.allowing'),
    deny: t('consent.deny'),
    loading: t('consent.loading'),
  },
  signIn: {
    identifier: t('signIn.identifier'),
    password: t('signIn.password'),
    submit: t('signIn.submit'),
    submitting: t('signIn.submitting'),
    forgotPassword: t('signIn.forgotPassword'),
    useCode: t('signIn.useCode'),
    usePassword: t('signIn.usePassword'),
    noAccount: t('signIn.noAccount'),
    register: t('signIn.register'),
    otherWays: t('signIn.otherWays'),
    continueWith: (name: string) => t('signIn.continueWith', { name }),
  },
  passkeySignIn: {
    label: t('passkeySignIn.label'),
    waiting: t('passkeySignIn.waiting'),
    notRecognised: t('passkeySignIn.notRecognised'),
    notUsed: t('passkeySignIn.notUsed'),
  },
  signInCode: codePhrases('signInCode'),
  resetCode: codePhrases('resetCode'),
  code: {
    send: t('code.send'),
    sending: t('code.sending'),
    code: t('code.code'),
    sendAgain: t('code.sendAgain'),
    email: {
      label: t('code.email.label'),
      other: t('code.email.other'),
      invalidCode: t('code.email.invalidCode'),
    },
    phone: {
      label: t('code.phone.label'),
      other: t('code.phone.other'),
      invalidCode: t('code.phone.invalidCode'),
    },
  },
  register: {
    username: t('register.username'),
    usernameHint: t('register.usernameHint'),
    password: t('register.password'),
    passwordHint: t('register.passwordHint'),
    confirm: t('register.confirm'),
    submit: t('register.submit'),
    submitting: t('register.submitting'),
    haveAccount: t('register.haveAccount'),
    signIn: t('register.signIn'),
  },
  resetPassword: {
    password: t('resetPassword.password'),
    passwordHint: t('resetPassword.passwordHint'),
    confirm: t('resetPassword.confirm'),
    submit: t('resetPassword.submit'),
    submitting: t('resetPassword.submitting'),
    done: t('resetPassword.done'),
    backToSignIn: t('resetPassword.backToSignIn'),
  },
  callback: {
    finishing: t('callback.finishing'),
    notStartedHere: t('callback.notStartedHere'),
    linkOffer: (account: string) => ({
      before: t('callback.linkOfferBefore'),
      account,
      after: t('callback.linkOfferAfter'),
    }),
    link: t('callback.link'),
    linking: t('callback.linking'),
    newAccount: t('callback.newAccount'),
    backToSignIn: t('callback.backToSignIn'),
  },
  completeProfile: {
    title: t('completeProfile.title'),
    intro: (needs: string[]) => t('completeProfile.intro', { needs: all(needs) }),
    either,
    username: t('completeProfile.username'),
    password: t('completeProfile.password'),
    confirm: t('completeProfile.confirm'),
    submit: t('completeProfile.submit'),
    submitting: t('completeProfile.submitting'),
    useInstead: (name: string) => t('completeProfile.useInstead', { name }),
    email: codePhrases('completeProfile.email'),
    phone: codePhrases('completeProfile.phone'),
  },
  mfa: {
    verifyTitle: t('mfa.verifyTitle'),
    appCode: t('mfa.appCode'),
    backupCode: t('mfa.backupCode'),
    verify: t('mfa.verify'),
    verifying: t('mfa.verifying'),
    useBackupCode: t('mfa.useBackupCode'),
    useApp: t('mfa.useApp'),
    yourEmail: t('mfa.yourEmail'),
    yourPhone: t('mfa.yourPhone'),
    sendCodeTo: (to: string) => t('mfa.sendCodeTo', { to }),
    sendCodeInstead: (to: string) => t('mfa.sendCodeInstead', { to }),
    sending: t('mfa.sending'),
    sentTo: (to: string) => t('mfa.sentTo', { to }),
    sentCode: t('mfa.sentCode'),
    sendAgain: t('mfa.sendAgain'),
    enrolTitle: t('mfa.enrolTitle'),
    enrolIntro: t('mfa.enrolIntro'),
    qrCode: t('mfa.qrCode'),
    key: t('mfa.key'),
    enrolCode: t('mfa.enrolCode'),
    turnOn: t('mfa.turnOn'),
    turningOn: t('mfa.turningOn'),
    notNow: t('mfa.notNow'),
    backupTitle: t('mfa.backupTitle'),
    backupIntro: t('mfa.backupIntro'),
    saved: t('mfa.saved'),
    saving: t('mfa.saving'),
  },
  passkey: {
    use: t('passkey.use'),
    verifyTitle: t('passkey.verifyTitle'),
    verifyIntro: t('passkey.verifyIntro'),
    verifying: t('passkey.verifying'),
    add: t('passkey.add'),
    addTitle: t('passkey.addTitle'),
    addIntro: t('passkey.addIntro'),
    adding: t('passkey.adding'),
    useApp: t('passkey.useApp'),
    notNow: t('passkey.notNow'),
  },
  invalid: {
    identifier: t('invalid.identifier'),
    password: t('invalid.password'),
    email: t('invalid.email'),
    emailShape: t('invalid.emailShape'),
    phone: t('invalid.phone'),
    phoneShape: t('invalid.phoneShape'),
    username: t('invalid.username'),
    usernameShape: t('invalid.usernameShape'),
    newPassword: t('invalid.newPassword'),
    mismatch: t('invalid.mismatch'),
    appCode: t('invalid.appCode'),
    backupCode: t('invalid.backupCode'),
    sentCode: t('invalid.sentCode'),
  },
  errors: {
    network: t('errors.network'),
    page: t('errors.page'),
    server: t('errors.server'),
    tooManyAttempts: t('errors.tooManyAttempts'),
    failed: (status: number) => t('errors.failed', { status }),
    sessionNotFound: t('errors.sessionNotFound'),
    ssoEnabled: t('errors.ssoEnabled'),
    connectorUnavailable: t('errors.connectorUnavailable'),
    alsoNeeds: (names: string[]) => t('errors.alsoNeeds', { needs: all(names) }),
    checkInput: t('errors.checkInput'),
    choosePassword: t('errors.choosePassword'),
    passwordNotAllowed: (code: string) => t('errors.passwordNotAllowed', { code }),
    unknownReason: t('errors.unknownReason'),
  },
  /** An API error's code as the person is told it, when the catalogue has it (`session.invalid_credentials`). */
  apiError: (code: string) => (code ? t.optional(`apiErrors.${code}`) : undefined),
  /** What the account still needs (`user.missing_profile`), by the API's profile names. */
  profile: {
    username: t('profile.username'),
    email: t('profile.email'),
    phone: t('profile.phone'),
    password: t('profile.password'),
  } as Partial<Record<string, string>>,
  /** Why a password was refused, by the API's issue codes (`password.rejected`). */
  passwordIssues: {
    'password_rejected.too_short': ({ min }) => t('passwordIssues.tooShort', { count: Number(min) }),
    'password_rejected.too_long': ({ max }) => t('passwordIssues.tooLong', { count: Number(max) }),
    'password_rejected.character_types': ({ min }) => t('passwordIssues.characterTypes', { min }),
    'password_rejected.repetition_or_sequence': () => t('passwordIssues.repetitionOrSequence'),
    'password_rejected.restricted.user_info': () => t('passwordIssues.userInfo'),
    'password_rejected.restricted.words': () => t('passwordIssues.words'),
    'password_rejected.pwned': () => t('passwordIssues.pwned'),
  } as Partial<Record<string, (interpolation: Record<string, unknown>) => string>>,
};
