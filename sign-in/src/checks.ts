import { phrases } from './phrases.ts';

/** What the user typed is not usable: said in the form, on the field with id `field`. */
export class Invalid extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

// What a form asks for, checked before it is sent: each returns the value to send, or throws Invalid
// naming the input (by id) to correct.

export function required(field: string, value: string, message: string): string {
  const trimmed = value.trim();
  if (!trimmed) {
    throw new Invalid(field, message);
  }
  return trimmed;
}

export function requiredPassword(field: string, value: string, message: string): string {
  if (!value) {
    throw new Invalid(field, message);
  }
  return value;
}

export function requiredEmail(field: string, value: string): string {
  const email = required(field, value, phrases.invalid.email);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw new Invalid(field, phrases.invalid.emailShape);
  }
  return email;
}

/** A phone number with its country code: digits, spaces, dashes, dots and brackets people type are dropped. */
export function requiredPhone(field: string, value: string): string {
  const phone = required(field, value, phrases.invalid.phone).replace(/[\s().-]/g, '');
  if (!/^\+?\d{6,15}$/.test(phone)) {
    throw new Invalid(field, phrases.invalid.phoneShape);
  }
  return phone;
}

/** A one-time code of `pattern` (spaces people type in it are dropped). */
export function requiredCode(field: string, value: string, pattern: RegExp, message: string): string {
  const code = value.replace(/\s+/g, '');
  if (!pattern.test(code)) {
    throw new Invalid(field, message);
  }
  return code;
}

export const sixDigits = /^\d{6}$/;

export function requiredNewPassword(
  password: { field: string; value: string },
  confirm: { field: string; value: string },
): string {
  const value = requiredPassword(password.field, password.value, phrases.invalid.newPassword);
  if (confirm.value !== value) {
    throw new Invalid(confirm.field, phrases.invalid.mismatch);
  }
  return value;
}
