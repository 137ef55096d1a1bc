import type { APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '../http/responses.ts';
import type { ConsolePerson } from './types.ts';

/**
 * `GET /console/api/me`: who is signed in, for the console's header and to show only what the role may do.
 *
 * @example
 * meAnswer(person) // 200 {"email":"support@example.com","roles":["support"]}
 */
export const meAnswer = async (person: ConsolePerson): Promise<APIGatewayProxyResult> =>
  jsonResponse(200, { email: person.email, roles: person.roles });
