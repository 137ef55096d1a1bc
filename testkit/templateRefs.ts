import type { Template } from './packagedTemplate.ts';

/** The account and region a template is resolved for (any would do: the same on both sides of a comparison). */
export const PSEUDO_PARAMETERS = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'eu-west-1',
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'dealer-gateway-ci',
} as const;

type Intrinsic = Record<string, unknown>;

const isIntrinsic = (value: unknown, name: string): value is Intrinsic =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).join() === name;

/**
 * Resolves a CloudFormation template's references (`Ref`, `Fn::GetAtt`, `Fn::Sub`, `Fn::Join`) to the values
 * they take once deployed, for the resource types whose names and ARNs follow from their properties (queues,
 * tables, topics, functions, log groups, event buses). Anything else throws, naming what to add.
 *
 * @example
 * const refs = templateRefs(template);
 * refs.resolve({ 'Fn::GetAtt': ['RecordsTable', 'Arn'] }); // arn:aws:dynamodb:eu-west-1:123456789012:table/…
 */
export const templateRefs = (template: Template) => {
  const p = PSEUDO_PARAMETERS;
  const arnPrefix = (service: string) =>
    `arn:${p['AWS::Partition']}:${service}:${p['AWS::Region']}:${p['AWS::AccountId']}`;

  const resourceOf = (id: string) => {
    const resource = template.Resources[id];
    if (!resource) throw new Error(`no resource ${id} in the template`);
    return resource;
  };

  /** A name property the resource must set (CloudFormation would otherwise make one up). */
  const nameOf = (id: string, property: string): string => {
    const value = resourceOf(id).Properties?.[property];
    if (value === undefined) throw new Error(`${id} has no ${property}: its deployed name cannot be known`);
    return resolve(value);
  };

  const attributes: Record<string, (id: string) => Record<string, () => string>> = {
    'AWS::SQS::Queue': (id) => ({
      Ref: () =>
        `https://sqs.${p['AWS::Region']}.amazonaws.com/${p['AWS::AccountId']}/${nameOf(id, 'QueueName')}`,
      Arn: () => `${arnPrefix('sqs')}:${nameOf(id, 'QueueName')}`,
      QueueName: () => nameOf(id, 'QueueName'),
      QueueUrl: () => attributes['AWS::SQS::Queue'](id).Ref(),
    }),
    'AWS::DynamoDB::Table': (id) => ({
      Ref: () => nameOf(id, 'TableName'),
      Arn: () => `${arnPrefix('dynamodb')}:table/${nameOf(id, 'TableName')}`,
    }),
    'AWS::SNS::Topic': (id) => ({
      Ref: () => `${arnPrefix('sns')}:${nameOf(id, 'TopicName')}`,
      TopicArn: () => `${arnPrefix('sns')}:${nameOf(id, 'TopicName')}`,
      TopicName: () => nameOf(id, 'TopicName'),
    }),
    'AWS::Lambda::Function': (id) => ({
      Ref: () => nameOf(id, 'FunctionName'),
      Arn: () => `${arnPrefix('lambda')}:function:${nameOf(id, 'FunctionName')}`,
    }),
    'AWS::Events::EventBus': (id) => ({
      Ref: () => nameOf(id, 'Name'),
      Name: () => nameOf(id, 'Name'),
      Arn: () => `${arnPrefix('events')}:event-bus/${nameOf(id, 'Name')}`,
    }),
    'AWS::Logs::LogGroup': (id) => ({
      Ref: () => nameOf(id, 'LogGroupName'),
      Arn: () => `${arnPrefix('logs')}:log-group:${nameOf(id, 'LogGroupName')}:*`,
    }),
  };

  const attribute = (id: string, name: string): string => {
    const type = resourceOf(id).Type;
    const get = attributes[type]?.(id)[name];
    if (!get) throw new Error(`${name} of ${id} (${type}) is not resolved by testkit/templateRefs.ts`);
    return get();
  };

  const ref = (name: string): string => (name in p ? p[name as keyof typeof p] : attribute(name, 'Ref'));

  const sub = (pattern: string, variables: Record<string, unknown> = {}): string =>
    pattern.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
      if (name.startsWith('!')) return whole.replace('${!', '${');
      if (name in variables) return resolve(variables[name]);
      const dot = name.indexOf('.');
      return dot < 0 ? ref(name) : attribute(name.slice(0, dot), name.slice(dot + 1));
    });

  /** The deployed value of a template value: a string, or an intrinsic function of the kinds above. */
  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (isIntrinsic(value, 'Ref')) return ref(String(value.Ref));
    if (isIntrinsic(value, 'Fn::GetAtt')) {
      const target = value['Fn::GetAtt'];
      const [id, name] = Array.isArray(target) ? target : String(target).split(/\.(.*)/);
      return attribute(String(id), String(name));
    }
    if (isIntrinsic(value, 'Fn::Sub')) {
      const args = value['Fn::Sub'];
      return Array.isArray(args)
        ? sub(String(args[0]), args[1] as Record<string, unknown>)
        : sub(String(args));
    }
    if (isIntrinsic(value, 'Fn::Join')) {
      const [separator, parts] = value['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(separator);
    }
    throw new Error(`cannot resolve ${JSON.stringify(value)} (testkit/templateRefs.ts)`);
  };

  return { resolve, ref, attribute, arnPrefix };
};

export type TemplateRefs = ReturnType<typeof templateRefs>;
