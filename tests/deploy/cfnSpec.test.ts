import { beforeAll, describe, expect, it } from 'vitest';
import { type CfnSpec, checkTemplateAgainstSpec, loadCfnSpec } from '../../testkit/cfnSpec.ts';
import { packagedTemplate, type Template } from '../../testkit/packagedTemplate.ts';

/*
 * The packaged template against the CloudFormation resource specification (the `@aws-cdk/cfnspec` package):
 * a misspelt property, a missing required one or a wrong primitive type is otherwise found only by a deploy
 * that fails half way (or, for a misspelt optional property, never: CloudFormation refuses it, serverless
 * does not check it).
 */
let template: Template;
let spec: CfnSpec;

beforeAll(async () => {
  [{ template }, spec] = await Promise.all([packagedTemplate(), loadCfnSpec()]);
}, 120_000);

describe('the packaged template against the CloudFormation resource specification', () => {
  it('has only resource types, properties and attributes the specification knows, every required property, and values of their types', () => {
    expect(Object.keys(template.Resources).length).toBeGreaterThan(10);
    expect(checkTemplateAgainstSpec(template, spec)).toEqual([]);
  });

  it('the check finds a misspelt or missing property, a wrong type, an unknown type, attribute or reference', () => {
    // Prepare: one mistake of each kind in a copy of the template.
    const broken = structuredClone(template);
    const resources = broken.Resources;
    const [tableId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::DynamoDB::Table') ?? [];
    const [functionId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Lambda::Function') ?? [];
    const [queueId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::SQS::Queue') ?? [];
    const [roleId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::IAM::Role') ?? [];
    const table = resources[String(tableId)].Properties;
    table.BilingMode = table.BillingMode;
    delete table.BillingMode;
    const [key] = table.KeySchema as Record<string, unknown>[];
    key.KeyTyp = key.KeyType;
    delete key.KeyType;
    resources[String(functionId)].Properties.Timeout = 'sixty';
    delete resources[String(roleId)].Properties.AssumeRolePolicyDocument;
    resources[String(queueId)].Type = 'AWS::SQS::Queu';
    resources.Extra = {
      Type: 'AWS::SNS::Topic',
      Properties: { TopicName: { 'Fn::GetAtt': [String(tableId), 'Arm'] }, DisplayName: { Ref: 'Nowhere' } },
    };
    // Act
    const problems = checkTemplateAgainstSpec(broken, spec);
    // Assess
    expect(problems).toEqual(
      expect.arrayContaining([
        `${tableId}.Properties.BilingMode: no such property of AWS::DynamoDB::Table`,
        `${tableId}.Properties.KeySchema[0].KeyTyp: no such property of AWS::DynamoDB::Table.KeySchema`,
        `${tableId}.Properties.KeySchema[0].KeyType: required by AWS::DynamoDB::Table.KeySchema`,
        `${functionId}.Properties.Timeout: must be Integer, is "sixty"`,
        `${roleId}.Properties.AssumeRolePolicyDocument: required by AWS::IAM::Role`,
        `${queueId}: no resource type AWS::SQS::Queu in the specification`,
        'Extra.Properties.TopicName: AWS::DynamoDB::Table has no attribute Arm',
        'Extra.Properties.DisplayName: Ref to Nowhere, which the template does not have',
      ]),
    );
  });
});
