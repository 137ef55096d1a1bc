import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Template } from './packagedTemplate.ts';

/** A property (or list item, or map value) as the CloudFormation resource specification describes it. */
interface SpecProperty {
  PrimitiveType?: string;
  Type?: string;
  ItemType?: string;
  PrimitiveItemType?: string;
  /** Properties that take one of several types: their values are not type-checked here. */
  PrimitiveTypes?: string[];
  PrimitiveItemTypes?: string[];
  ItemTypes?: string[];
  Types?: string[];
  Required?: boolean;
}

interface SpecType {
  Properties?: Record<string, SpecProperty>;
  Attributes?: Record<string, unknown>;
}

/** The CloudFormation resource specification (`@aws-cdk/cfnspec`'s spec/specification.json). */
export interface CfnSpec {
  ResourceSpecificationVersion: string;
  ResourceTypes: Record<string, SpecType>;
  PropertyTypes: Record<string, SpecType & SpecProperty>;
}

/** Reads the specification carried by the `@aws-cdk/cfnspec` package. */
export const loadCfnSpec = async (): Promise<CfnSpec> => {
  const file = createRequire(import.meta.url).resolve('@aws-cdk/cfnspec/spec/specification.json');
  return JSON.parse(await readFile(file, 'utf8')) as CfnSpec;
};

/** The keys a resource entry of a template may have besides its Type. */
const RESOURCE_KEYS = new Set([
  'Type',
  'Properties',
  'DependsOn',
  'Condition',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'UpdatePolicy',
  'CreationPolicy',
  'Metadata',
]);

const PSEUDO_PARAMETERS = new Set([
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
]);

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An intrinsic function (`Ref`, `Fn::*`, `Condition`), whose value CloudFormation computes. */
const intrinsicName = (value: Json): string | undefined => {
  if (!isObject(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::') || keys[0] === 'Condition')
    ? keys[0]
    : undefined;
};

/** Whether a value has a primitive type, as CloudFormation converts them (numbers and booleans as strings too). */
const primitiveOk = (type: string, value: Json): boolean => {
  switch (type) {
    case 'String':
      return ['string', 'number', 'boolean'].includes(typeof value);
    case 'Integer':
    case 'Long':
      return (
        (typeof value === 'number' && Number.isInteger(value)) ||
        (typeof value === 'string' && /^-?\d+$/.test(value))
      );
    case 'Double':
      return (
        (typeof value === 'number' && Number.isFinite(value)) ||
        (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
      );
    case 'Boolean':
      return typeof value === 'boolean' || (typeof value === 'string' && /^(true|false)$/i.test(value));
    case 'Json':
      return isObject(value) || Array.isArray(value) || typeof value === 'string';
    case 'Timestamp':
      return typeof value === 'string';
    default:
      return true;
  }
};

/**
 * Checks a template's resources against the CloudFormation resource specification: every resource type exists,
 * every property (at any depth) is one the type has, every required property is present, and primitive values,
 * lists and maps have their type (values computed by intrinsic functions are not judged; `Fn::If` branches are).
 * Also checks that every `Ref`, `Fn::GetAtt` (with the attribute's name), `Fn::Sub` reference, `DependsOn` and
 * `Condition` names something the template has.
 *
 * @returns the problems found, each naming the resource and the property path; none when the template is right.
 * @example
 * checkTemplateAgainstSpec(template, await loadCfnSpec()); // ['RecordsTable.Properties.TabelName: no such property of AWS::DynamoDB::Table']
 */
export const checkTemplateAgainstSpec = (template: Template, spec: CfnSpec): string[] => {
  const problems: string[] = [];
  const resources = template.Resources;
  const parameters = isObject(template.Parameters) ? template.Parameters : {};
  const conditions = isObject(template.Conditions) ? template.Conditions : {};

  const propertyType = (resourceType: string, name: string) =>
    spec.PropertyTypes[`${resourceType}.${name}`] ?? spec.PropertyTypes[name];

  const checkProperties = (
    where: string,
    resourceType: string,
    definitions: Record<string, SpecProperty>,
    value: Json,
    typeName: string,
  ): void => {
    if (intrinsicName(value)) {
      checkIntrinsic(where, value, (branch, at) =>
        checkProperties(at, resourceType, definitions, branch, typeName),
      );
      return;
    }
    if (!isObject(value)) {
      problems.push(`${where}: ${typeName} must be an object`);
      return;
    }
    for (const [name, item] of Object.entries(value)) {
      const definition = definitions[name];
      if (!definition) problems.push(`${where}.${name}: no such property of ${typeName}`);
      else checkValue(`${where}.${name}`, resourceType, definition, item);
    }
    for (const [name, definition] of Object.entries(definitions)) {
      if (definition.Required && !(name in value)) problems.push(`${where}.${name}: required by ${typeName}`);
    }
  };

  /** `Fn::If` is judged by both its branches (AWS::NoValue aside); other intrinsics are not judged. */
  const checkIntrinsic = (where: string, value: Json, check: (branch: Json, at: string) => void) => {
    if (intrinsicName(value) !== 'Fn::If') return;
    const branches = (value as { 'Fn::If': Json[] })['Fn::If'].slice(1);
    for (const [i, branch] of branches.entries()) {
      if (!(isObject(branch) && branch.Ref === 'AWS::NoValue')) check(branch, `${where}[Fn::If ${i + 1}]`);
    }
  };

  const checkItem = (
    where: string,
    resourceType: string,
    primitive: string | undefined,
    type: string | undefined,
    value: Json,
  ) => {
    if (intrinsicName(value)) {
      checkIntrinsic(where, value, (branch, at) => checkItem(at, resourceType, primitive, type, branch));
      return;
    }
    if (primitive) {
      if (!primitiveOk(primitive, value))
        problems.push(`${where}: must be ${primitive}, is ${JSON.stringify(value)}`);
      return;
    }
    if (!type) return;
    const definition = propertyType(resourceType, type);
    if (!definition) {
      problems.push(`${where}: the specification has no property type ${type} of ${resourceType}`);
      return;
    }
    if (definition.Properties)
      checkProperties(where, resourceType, definition.Properties, value, `${resourceType}.${type}`);
    else checkValue(where, resourceType, definition, value);
  };

  const checkValue = (where: string, resourceType: string, definition: SpecProperty, value: Json): void => {
    if (
      definition.PrimitiveTypes ||
      definition.Types ||
      definition.ItemTypes ||
      definition.PrimitiveItemTypes
    )
      return;
    if (intrinsicName(value)) {
      checkIntrinsic(where, value, (branch, at) => checkValue(at, resourceType, definition, branch));
      return;
    }
    if (definition.Type === 'List') {
      if (!Array.isArray(value)) {
        problems.push(`${where}: must be a list`);
        return;
      }
      for (const [i, item] of value.entries()) {
        checkItem(`${where}[${i}]`, resourceType, definition.PrimitiveItemType, definition.ItemType, item);
      }
      return;
    }
    if (definition.Type === 'Map') {
      if (!isObject(value)) {
        problems.push(`${where}: must be a map`);
        return;
      }
      for (const [key, item] of Object.entries(value)) {
        checkItem(`${where}.${key}`, resourceType, definition.PrimitiveItemType, definition.ItemType, item);
      }
      return;
    }
    checkItem(where, resourceType, definition.PrimitiveType, definition.Type, value);
  };

  /** References anywhere in a value: Ref, Fn::GetAtt, Fn::Sub's ${...}. */
  const checkReferences = (where: string, value: Json): void => {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) checkReferences(`${where}[${i}]`, item);
      return;
    }
    if (!isObject(value)) return;
    const name = intrinsicName(value);
    if (name === 'Ref') {
      const target = String(value.Ref);
      if (!resources[target] && !(target in parameters) && !PSEUDO_PARAMETERS.has(target)) {
        problems.push(`${where}: Ref to ${target}, which the template does not have`);
      }
      return;
    }
    if (name === 'Fn::GetAtt') {
      const args = value['Fn::GetAtt'];
      const [id, attribute] = Array.isArray(args) ? args.map(String) : String(args).split(/\.(.*)/);
      checkAttribute(where, id, attribute);
      return;
    }
    if (name === 'Fn::Sub') {
      const args = value['Fn::Sub'];
      const [pattern, variables] = Array.isArray(args) ? [String(args[0]), args[1]] : [String(args), {}];
      const own = isObject(variables) ? variables : {};
      for (const [, inner] of pattern.matchAll(/\$\{([^!}][^}]*)\}/g)) {
        if (inner in own || PSEUDO_PARAMETERS.has(inner) || inner in parameters) continue;
        const dot = inner.indexOf('.');
        if (dot < 0 && !resources[inner])
          problems.push(`${where}: Fn::Sub names \${${inner}}, which the template does not have`);
        if (dot >= 0) checkAttribute(where, inner.slice(0, dot), inner.slice(dot + 1));
      }
      checkReferences(where, own);
      return;
    }
    if (name === 'Condition') {
      if (!(String(value.Condition) in conditions))
        problems.push(`${where}: no condition ${String(value.Condition)}`);
      return;
    }
    if (name === 'Fn::If' && !(String((value['Fn::If'] as Json[])[0]) in conditions)) {
      problems.push(`${where}: Fn::If on ${String((value['Fn::If'] as Json[])[0])}, which is no condition`);
    }
    for (const [key, item] of Object.entries(value)) checkReferences(`${where}.${key}`, item);
  };

  const checkAttribute = (where: string, id: string, attribute: string) => {
    const target = resources[id];
    if (!target) {
      problems.push(`${where}: Fn::GetAtt of ${id}, which the template does not have`);
      return;
    }
    const attributes = spec.ResourceTypes[target.Type]?.Attributes;
    if (attributes && !(attribute in attributes)) {
      problems.push(`${where}: ${target.Type} has no attribute ${attribute}`);
    }
  };

  for (const [id, resource] of Object.entries(resources)) {
    const entry = resource as unknown as Record<string, Json>;
    for (const key of Object.keys(entry)) {
      if (!RESOURCE_KEYS.has(key)) problems.push(`${id}.${key}: not a key of a resource`);
    }
    const type = resource.Type;
    if (type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource') continue;
    const definition = spec.ResourceTypes[type];
    if (!definition) {
      problems.push(`${id}: no resource type ${type} in the specification`);
      continue;
    }
    checkProperties(`${id}.Properties`, type, definition.Properties ?? {}, resource.Properties ?? {}, type);
    checkReferences(`${id}.Properties`, resource.Properties ?? {});
    for (const dependency of [resource.DependsOn ?? []].flat()) {
      if (!resources[dependency]) problems.push(`${id}.DependsOn: no resource ${dependency}`);
    }
    if (resource.Condition !== undefined && !(resource.Condition in conditions)) {
      problems.push(`${id}.Condition: no condition ${resource.Condition}`);
    }
  }
  if (isObject(template.Outputs)) checkReferences('Outputs', template.Outputs);
  if (isObject(template.Conditions)) checkReferences('Conditions', template.Conditions);
  return problems;
};
