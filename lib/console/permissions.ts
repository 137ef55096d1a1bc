import { ConsoleForbiddenError } from './errors.ts';
import type { ConsolePermission, ConsolePerson, ConsoleRole } from './types.ts';

/** The roles that hold each permission: support reads; operators read and act. */
const HOLDERS: Readonly<Record<ConsolePermission, readonly ConsoleRole[]>> = {
  read: ['support', 'operators'],
  act: ['operators'],
};

/**
 * Whether a person holds a permission through one of their roles.
 *
 * @example
 * may({ sub: 's', email: 'support@example.com', roles: ['support'] }, 'act') // false
 */
export const may = (person: ConsolePerson, permission: ConsolePermission): boolean =>
  person.roles.some((role) => HOLDERS[permission].includes(role));

/**
 * Refuses (403) a person without the permission, before the route does anything.
 *
 * @throws ConsoleForbiddenError
 */
export const requirePermission = (person: ConsolePerson, permission: ConsolePermission): void => {
  if (may(person, permission)) return;
  throw new ConsoleForbiddenError(
    permission === 'act'
      ? 'only the operators role may do this'
      : 'a console role (support or operators) is required',
  );
};
