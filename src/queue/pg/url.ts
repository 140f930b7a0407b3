// Database URLs in messages: never printed as given, since the user part may carry a password.
import { ProctorError } from '../../errors.js';

/** Whether a database name looks like a PostgreSQL URL (the only other kind is a path). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The URL without its user and password, for messages. */
export function displayUrl(url: string): string {
  return url.replace(/^([a-z0-9+.-]+:\/\/)[^/?#@]*@/i, '$1***@');
}

export function unreadable(url: string, reason: string, cause?: unknown): ProctorError {
  return new ProctorError('DB_UNREADABLE', `cannot use database ${displayUrl(url)}: ${reason}`, {
    cause,
  });
}
