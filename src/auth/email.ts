/**
 * One rule for e-mail addresses, shared by the sign-up page and the operator command:
 * trimmed, lower-cased, one `@`, a dotted domain, no spaces or control characters.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** The address as stored, or null when it is not one. */
export function normalizeEmail(input: string): string | null {
  const email = input.trim().toLowerCase();
  if (email.length > 254 || CONTROL.test(email) || !SHAPE.test(email)) return null;
  return email;
}
