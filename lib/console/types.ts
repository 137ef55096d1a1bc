import type { CONSOLE_ROLES } from './constants.ts';

/** A console role: `support` reads, `operators` also act (redrive, enable a webhook, resend an event). */
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** What a route needs: to read (either role) or to act (operators). */
export type ConsolePermission = 'read' | 'act';

/** The person a verified ID token names. `email` is for answers only: logs name a person by `sub`. */
export interface ConsolePerson {
  sub: string;
  email: string;
  roles: ConsoleRole[];
}
