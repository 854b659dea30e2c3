import { customAlphabet } from 'nanoid';

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Entity ids: 21 lowercase alphanumerics, as Logto's, so they are safe in URLs and case-insensitive stores. */
export const generateId = customAlphabet(alphabet, 21);

/** Client secrets and signing keys for webhooks: 32 characters, about 165 bits. */
export const generateSecret = customAlphabet(`${alphabet}ABCDEFGHIJKLMNOPQRSTUVWXYZ`, 32);
