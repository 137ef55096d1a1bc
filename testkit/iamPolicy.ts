/**
 * A direct evaluator of the identity policies of a template's roles, for tests/deploy/roles.test.ts. Not a full
 * IAM simulator (such as @cloud-copilot/iam-simulate, AGPL, with its whole action and condition database): the
 * roles here are plain Allow statements of actions on resource ARNs, and a comparison with the recorded calls
 * needs exactly IAM's rules for those (wildcards `*` and `?`, actions without regard to case, an explicit Deny
 * wins), and the few condition operators the roles use (`StringEquals`, `StringEqualsIfExists`, `StringLike`,
 * `ForAllValues:StringEquals`, `ForAllValues:StringLike`, `ForAllValues:StringNotLike`, `Bool`, `Null`) on the
 * request's context. Whatever it does not evaluate (other operators,
 * NotAction, NotResource, managed policies, permissions boundaries) makes it throw rather than guess, so a role it
 * cannot read never passes.
 */
import type { Template } from './packagedTemplate.ts';
import type { TemplateRefs } from './templateRefs.ts';

/** One statement of a role's policies, its resources resolved to the ARNs they take once deployed. */
export interface PolicyStatement {
  effect: 'Allow' | 'Deny';
  actions: string[];
  resources: string[];
  /** Its Condition block, if any: operator → key → the values allowed. */
  conditions?: Record<string, Record<string, string[]>>;
  /** Where it comes from: `<role>/<policy name>` or the policy resource's id. */
  source: string;
}

/** The condition operators this checker evaluates. */
const OPERATORS = new Set([
  'StringEquals',
  'StringEqualsIfExists',
  'StringLike',
  'ForAllValues:StringEquals',
  'ForAllValues:StringLike',
  'ForAllValues:StringNotLike',
  'Bool',
  'Null',
]);

/** What IAM authorises: an action on a resource ARN (`*` for actions that take no resource). */
export interface IamRequest {
  action: string;
  resource: string;
  /** The request's condition keys and their values (absent keys are absent). */
  context?: Record<string, string[]>;
}

const asList = (value: unknown): unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The statement elements this checker evaluates; any other (conditions, NotAction, ...) makes it refuse. */
const KNOWN_ELEMENTS = new Set(['Sid', 'Effect', 'Action', 'Resource', 'Condition']);

/**
 * Every statement that applies to a role of the template: its inline `Policies` and the `AWS::IAM::Policy` /
 * `AWS::IAM::ManagedPolicy` resources attached to it. Throws on what this checker cannot evaluate (managed
 * policy ARNs, permissions boundaries, conditions, NotAction, NotResource), so such a role is never passed
 * unread.
 *
 * @example
 * roleStatements(template, 'ErpDeliveryRole', templateRefs(template));
 */
export const roleStatements = (template: Template, roleId: string, refs: TemplateRefs): PolicyStatement[] => {
  const role = template.Resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleId} is not an AWS::IAM::Role of the template`);
  for (const property of ['ManagedPolicyArns', 'PermissionsBoundary']) {
    if (role.Properties[property] !== undefined) {
      throw new Error(`${roleId}.${property}: the checker cannot see the statements of those policies`);
    }
  }
  const documents = asList(role.Properties.Policies).map((policy) => {
    const { PolicyName, PolicyDocument } = policy as { PolicyName: string; PolicyDocument: unknown };
    return { source: `${roleId}/${PolicyName}`, document: PolicyDocument };
  });
  for (const [id, resource] of Object.entries(template.Resources)) {
    const attached =
      ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy'].includes(resource.Type) &&
      asList(resource.Properties.Roles).some((r) => same(r, { Ref: roleId }));
    const rolePolicy =
      resource.Type === 'AWS::IAM::RolePolicy' && same(resource.Properties.RoleName, { Ref: roleId });
    if (attached || rolePolicy) documents.push({ source: id, document: resource.Properties.PolicyDocument });
  }
  return documents.flatMap(({ source, document }) =>
    asList((document as { Statement?: unknown })?.Statement).map((raw) => {
      const statement = raw as Record<string, unknown>;
      const unknown = Object.keys(statement).filter((key) => !KNOWN_ELEMENTS.has(key));
      if (unknown.length > 0)
        throw new Error(`${source}: the checker does not evaluate ${unknown.join(', ')}`);
      if (statement.Effect !== 'Allow' && statement.Effect !== 'Deny') {
        throw new Error(`${source}: Effect ${String(statement.Effect)}`);
      }
      const conditions = statement.Condition as Record<string, Record<string, unknown>> | undefined;
      for (const operator of Object.keys(conditions ?? {}))
        if (!OPERATORS.has(operator)) throw new Error(`${source}: the checker does not evaluate ${operator}`);
      return {
        effect: statement.Effect,
        actions: asList(statement.Action).map(String),
        resources: asList(statement.Resource).map((r) => refs.resolve(r)),
        ...(conditions
          ? {
              conditions: Object.fromEntries(
                Object.entries(conditions).map(([operator, keys]) => [
                  operator,
                  Object.fromEntries(Object.entries(keys).map(([key, v]) => [key, asList(v).map(String)])),
                ]),
              ),
            }
          : {}),
        source,
      };
    }),
  );
};

const globs = new Map<string, RegExp>();

/** IAM's wildcards: `*` any run of characters (`/` and `:` included), `?` one character. */
export const iamGlob = (pattern: string, ignoreCase = false): RegExp => {
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`;
  let glob = globs.get(key);
  if (!glob) {
    const body = pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    glob = new RegExp(`^${body}$`, ignoreCase ? 'i' : '');
    globs.set(key, glob);
  }
  return glob;
};

/** Actions match without regard to case (IAM's rule); resource ARNs with it. */
const grants = (statement: PolicyStatement, request: IamRequest): boolean =>
  statement.actions.some((action) => iamGlob(action, true).test(request.action)) &&
  statement.resources.some((resource) => iamGlob(resource).test(request.resource));

/** Whether a value matches one of a condition's patterns (`*`, `?`; case matters, as in IAM's StringLike). */
const like = (value: string, patterns: string[]) => patterns.some((pattern) => iamGlob(pattern).test(value));

/**
 * Whether a statement's conditions hold for the request's context (IAM: every operator and key must). As in IAM, a
 * `ForAllValues:` operator holds for a key the request does not carry: a role relying on one grants only actions
 * whose requests always carry the key (the leading keys of item operations).
 */
const conditionsHold = (statement: PolicyStatement, context: Record<string, string[]>): boolean =>
  Object.entries(statement.conditions ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, allowed]) => {
      const values = context[key];
      switch (operator) {
        case 'ForAllValues:StringEquals':
          return (values ?? []).every((value) => allowed.includes(value));
        case 'ForAllValues:StringLike':
          return (values ?? []).every((value) => like(value, allowed));
        case 'ForAllValues:StringNotLike':
          return (values ?? []).every((value) => !like(value, allowed));
        case 'StringLike':
          return values?.some((value) => like(value, allowed)) ?? false;
        case 'Null':
          // `true`: the key must be absent; `false`: present.
          return allowed.includes(String(values === undefined));
        case 'StringEqualsIfExists':
          return values === undefined || values.some((value) => allowed.includes(value));
        default:
          // StringEquals, Bool: the key must be there with an allowed value.
          return values?.some((value) => allowed.includes(value)) ?? false;
      }
    }),
  );

/** IAM's rule for identity policies alone: allowed when a statement allows it and none denies it. */
export const isAllowed = (statements: PolicyStatement[], request: IamRequest): boolean =>
  statements.some(
    (s) => s.effect === 'Allow' && grants(s, request) && conditionsHold(s, request.context ?? {}),
  ) &&
  !statements.some(
    (s) => s.effect === 'Deny' && grants(s, request) && conditionsHold(s, request.context ?? {}),
  );

/**
 * The grants (`action on resource` of each Allow statement) that no request uses. A request uses a statement's grant
 * only when the statement's conditions hold for it: a statement for one key shape (its leading keys) that no call
 * touches is unused, though another statement lets the same action reach other keys.
 *
 * @example
 * unusedGrants(statements, [{ action: 'dynamodb:GetItem', resource: tableArn }]); // ['dynamodb:UpdateItem on arn:…']
 */
export const unusedGrants = (statements: PolicyStatement[], requests: IamRequest[]): string[] =>
  statements
    .filter((s) => s.effect === 'Allow')
    .flatMap((s) =>
      s.actions.flatMap((action) =>
        s.resources
          .filter(
            (resource) =>
              !requests.some(
                (r) =>
                  iamGlob(action, true).test(r.action) &&
                  iamGlob(resource).test(r.resource) &&
                  conditionsHold(s, r.context ?? {}),
              ),
          )
          .map(
            (resource) =>
              `${action} on ${resource}${s.conditions ? ` if ${JSON.stringify(s.conditions)}` : ''}`,
          ),
      ),
    );
