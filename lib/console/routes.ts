import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { activityAnswer } from './activity/activityRequest.ts';
import { auditAnswer } from './auditRequest.ts';
import { customerAnswer } from './customerRequest.ts';
import { downstreamsAnswer } from './downstreamsRequest.ts';
import { failedAnswer, recordsAnswer } from './listsRequest.ts';
import { meAnswer } from './meRequest.ts';
import { recordAnswer } from './recordRequest.ts';
import { redriveAnswer } from './redriveRequest.ts';
import { traceAnswer } from './traceRequest.ts';
import type { ConsolePermission, ConsolePerson } from './types.ts';
import { enableAnswer, resendAnswer } from './webhookRequests.ts';
import { webhooksAnswer } from './webhooksRequest.ts';

/** What a route is given: the request, the signed-in person, and the named parts of its path. */
export interface RouteRequest {
  event: APIGatewayProxyEvent;
  person: ConsolePerson;
  params: Record<string, string>;
}

/** One route of the console API: its method, its path under `/console/api/`, what it needs, and its answer. */
export interface ConsoleRoute {
  method: 'GET' | 'POST';
  /** Matched against the whole path after `/console/api/`; named groups become `params`. */
  path: RegExp;
  permission: ConsolePermission;
  answer: (request: RouteRequest) => Promise<APIGatewayProxyResult>;
}

/**
 * THE console API: every route, in one place (a page added later adds its routes here). Each is checked against the
 * person's roles before it runs (lib/console/consoleRequest.ts).
 */
export const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: /^me$/, permission: 'read', answer: ({ person }) => meAnswer(person) },
  { method: 'GET', path: /^records$/, permission: 'read', answer: ({ event }) => recordsAnswer(event) },
  { method: 'GET', path: /^failed$/, permission: 'read', answer: ({ event }) => failedAnswer(event) },
  { method: 'GET', path: /^downstreams$/, permission: 'read', answer: () => downstreamsAnswer() },
  { method: 'GET', path: /^webhooks$/, permission: 'read', answer: () => webhooksAnswer() },
  { method: 'GET', path: /^activity$/, permission: 'read', answer: () => activityAnswer() },
  {
    method: 'POST',
    path: /^records\/redrive$/,
    permission: 'act',
    answer: ({ event, person }) => redriveAnswer(event, person),
  },
  {
    method: 'GET',
    path: /^records\/(?<id>[^/]+)$/,
    permission: 'read',
    answer: ({ params }) => recordAnswer(params.id),
  },
  {
    method: 'GET',
    path: /^records\/(?<id>[^/]+)\/customer$/,
    permission: 'read',
    answer: ({ params, person }) => customerAnswer(params.id, person),
  },
  {
    method: 'GET',
    path: /^records\/(?<id>[^/]+)\/trace$/,
    permission: 'read',
    answer: ({ params }) => traceAnswer(params.id),
  },
  {
    method: 'POST',
    path: /^records\/(?<id>[^/]+)\/webhook\/resend$/,
    permission: 'act',
    answer: ({ params, person }) => resendAnswer(params.id, person),
  },
  {
    method: 'POST',
    path: /^webhooks\/(?<client>[^/]+)\/enable$/,
    permission: 'act',
    answer: ({ params, person }) => enableAnswer(params.client, person),
  },
  { method: 'GET', path: /^audit$/, permission: 'act', answer: ({ event }) => auditAnswer(event) },
];
