import type { CalledResource, RecordedCall } from './awsCallRecorder.ts';
import type { IamRequest } from './iamPolicy.ts';
import type { TemplateRefs } from './templateRefs.ts';

/** The local stand-ins of the template's queues and tables, by logical id (local/resources.ts). */
export interface LocalNames {
  tables: Record<string, { name: string }>;
  queues: Record<string, { name: string }>;
}

const byLocalName = (local: Record<string, { name: string }>, name: string) =>
  Object.entries(local).find(([, r]) => r.name === name)?.[0];

/**
 * The ARN IAM checks for a resource a recorded call named, once deployed: the local names of tables and queues
 * mapped back to the template's resources, then resolved with the template's refs. A name of no template resource
 * gives a text no statement matches (so the call shows as denied, naming it).
 *
 * @example
 * calledArn({ kind: 'table', name: 'dealer-gateway-t1-records', index: 'status' }, local, refs)
 * // arn:aws:dynamodb:eu-west-1:123456789012:table/dealer-gateway-ci-records/index/status
 */
export const calledArn = (
  resource: CalledResource | undefined,
  local: LocalNames,
  refs: TemplateRefs,
): string => {
  if (!resource) return '*';
  switch (resource.kind) {
    case 'table': {
      const id = byLocalName(local.tables, resource.name);
      if (!id) return `(table ${resource.name}: not a table of the template)`;
      const arn = refs.attribute(id, 'Arn');
      return resource.index ? `${arn}/index/${resource.index}` : arn;
    }
    case 'queue':
    case 'queueName': {
      const name = resource.kind === 'queue' ? (resource.url.split('/').pop() ?? '') : resource.name;
      const id = byLocalName(local.queues, name);
      return id ? refs.attribute(id, 'Arn') : `(queue ${name}: not a queue of the template)`;
    }
    case 'secret':
      // A secret named by its name: AWS appends six random characters to the name in its ARN.
      return resource.id.startsWith('arn:')
        ? resource.id
        : `${refs.arnPrefix('secretsmanager')}:secret:${resource.id}-AbCdEf`;
    case 'parameter':
    case 'parameterPath': {
      const name = resource.kind === 'parameter' ? resource.name : resource.path;
      return `${refs.arnPrefix('ssm')}:parameter${name.startsWith('/') ? '' : '/'}${name}`;
    }
    case 'eventBus':
      return resource.name.startsWith('arn:')
        ? resource.name
        : `${refs.arnPrefix('events')}:event-bus/${resource.name}`;
  }
};

/** An IAM request of a recorded call, with the call it comes from (for failure messages). */
export type RecordedRequest = IamRequest & { call: string };

/**
 * Every IAM request of the calls signed by `caller`, their resources resolved to deployed ARNs.
 *
 * @example
 * recordedRequests(recorder.calls, 'operator', local, refs).filter((r) => !isAllowed(statements, r));
 */
export const recordedRequests = (
  calls: RecordedCall[],
  caller: string,
  local: LocalNames,
  refs: TemplateRefs,
): RecordedRequest[] =>
  calls
    .filter((call) => call.caller === caller)
    .flatMap((call) =>
      call.authorised.map((a) => ({
        action: a.action,
        resource: calledArn(a.resource, local, refs),
        ...(a.context ? { context: a.context } : {}),
        call: `${call.service} ${call.operation} (HTTP ${call.status})`,
      })),
    );
