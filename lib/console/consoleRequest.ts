import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';
import { type ConsoleContext, personOf } from './consoleSession.ts';
import { requirePermission } from './permissions.ts';
import { CONSOLE_ROUTES, type ConsoleRoute } from './routes.ts';

/** The path under `/console/api/`: API Gateway's `{proxy+}`, else the event's path. */
const routePathOf = (event: APIGatewayProxyEvent): string =>
  event.pathParameters?.proxy ?? event.path.replace(/^\/console\/api\/?/, '');

/**
 * Answers a console API request of a signed-in person (consoleSession ran first): the route of its method and
 * path, once the person's roles allow it (403 before the route does anything). 404 for a path no route has, 405
 * for a method a path does not take.
 *
 * @example
 * await consoleRequest({ ...event, httpMethod: 'GET', pathParameters: { proxy: 'me' } }, context) // 200 {"email",…}
 */
export const consoleRequest = async (
  event: APIGatewayProxyEvent,
  context: ConsoleContext,
  routes: readonly ConsoleRoute[] = CONSOLE_ROUTES,
): Promise<APIGatewayProxyResult> => {
  const person = personOf(context);
  const path = routePathOf(event);
  const onPath = routes.filter((route) => route.path.test(path));
  const route = onPath.find((candidate) => candidate.method === event.httpMethod.toUpperCase());
  if (!route) {
    if (onPath.length === 0) throw new RequestRefusedError(404, 'no such console API route');
    throw new RequestRefusedError(405, `this route takes ${onPath.map((r) => r.method).join(', ')}`);
  }
  requirePermission(person, route.permission);
  const params = { ...route.path.exec(path)?.groups };
  return route.answer({ event, person, params });
};
