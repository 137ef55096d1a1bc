// A local serverless plugin for what CloudFormation cannot say about the REST API osls creates:
//
// 1. At packaging: the API's deployment depends on the gateway responses (deploy/apiKeys.cjs), so that the
//    snapshot a deploy publishes always holds them (API Gateway publishes gateway responses with a deployment).
// 2. After each deploy: the stage's method throttle of POST /crm/case for key-less browser-form posts
//    (`custom.clients.caseMethodThrottle`, from config/clients.json). osls creates the stage through its
//    deployment, and CloudFormation does not apply method settings to an existing stage, so this sets them with
//    UpdateStage, the way osls itself updates stage settings; null removes an earlier method throttle.
'use strict';

/** A resource path as a JSON-pointer segment of a stage's method settings: `/crm/case` -> `~1crm~1case`. */
const pointer = (resourcePath) => resourcePath.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The UpdateStage patch operations that make the stage's method throttle what is wanted.
 *
 * @param wanted `{resourcePath, httpMethod, rateLimit, burstLimit}` or null
 * @param current the stage's `methodSettings` (GetStage), keyed `~1crm~1case/POST`
 * @param resourcePath the method whose throttle this plugin owns when `wanted` is null
 */
const throttlePatch = (wanted, current = {}, resourcePath = '/crm/case', httpMethod = 'POST') => {
  if (wanted) {
    const base = `/${pointer(wanted.resourcePath)}/${wanted.httpMethod}/throttling`;
    return [
      { op: 'replace', path: `${base}/rateLimit`, value: String(wanted.rateLimit) },
      { op: 'replace', path: `${base}/burstLimit`, value: String(wanted.burstLimit) },
    ];
  }
  const key = `${pointer(resourcePath)}/${httpMethod}`;
  if (!current[key]) return [];
  return [
    { op: 'remove', path: `/${key}/throttling/rateLimit` },
    { op: 'remove', path: `/${key}/throttling/burstLimit` },
  ];
};

/** Makes every API Gateway deployment of the template depend on every gateway response. */
const deploymentsAfterGatewayResponses = (template) => {
  const resources = template.Resources ?? {};
  const responses = Object.keys(resources).filter(
    (id) => resources[id].Type === 'AWS::ApiGateway::GatewayResponse',
  );
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::ApiGateway::Deployment') continue;
    const before = resource.DependsOn === undefined ? [] : [resource.DependsOn].flat();
    resource.DependsOn = [...new Set([...before, ...responses])];
  }
  return template;
};

class ApiGatewayPlugin {
  constructor(serverless, _options, { log } = {}) {
    this.serverless = serverless;
    this.provider = serverless.getProvider('aws');
    this.log = log;
    this.hooks = {
      // After osls merged serverless.yml's `resources` into the template, before it writes the template.
      'before:aws:package:finalize:saveServiceState': () =>
        deploymentsAfterGatewayResponses(this.serverless.service.provider.compiledCloudFormationTemplate),
      'after:deploy:deploy': () => this.applyMethodThrottle(),
    };
  }

  /** An AWS SDK client package as the serverless CLI itself has it (osls depends on both used here). */
  sdk(name) {
    return require(require.resolve(name, { paths: [__dirname, this.serverless.config.serverlessPath] }));
  }

  async applyMethodThrottle() {
    const { APIGatewayClient, GetStageCommand, UpdateStageCommand } = this.sdk('@aws-sdk/client-api-gateway');
    const { CloudFormationClient, DescribeStackResourceCommand } = this.sdk('@aws-sdk/client-cloudformation');
    const wanted = this.serverless.service.custom?.clients?.caseMethodThrottle ?? null;
    const config = await this.provider.getAwsSdkV3Config();
    const stackResource = await new CloudFormationClient(config).send(
      new DescribeStackResourceCommand({
        StackName: this.provider.naming.getStackName(),
        LogicalResourceId: 'ApiGatewayRestApi',
      }),
    );
    const restApiId = stackResource.StackResourceDetail.PhysicalResourceId;
    const stageName = this.provider.getApiGatewayStage();
    const apiGateway = new APIGatewayClient(config);
    const stage = await apiGateway.send(new GetStageCommand({ restApiId, stageName }));
    const patchOperations = throttlePatch(wanted, stage.methodSettings);
    if (patchOperations.length === 0) return;
    await apiGateway.send(new UpdateStageCommand({ restApiId, stageName, patchOperations }));
    this.log?.notice?.(
      wanted
        ? `POST /crm/case throttled to ${wanted.rateLimit} requests/s (burst ${wanted.burstLimit}) for browser forms`
        : 'POST /crm/case method throttle removed (browser forms are off)',
    );
  }
}

module.exports = ApiGatewayPlugin;
module.exports.throttlePatch = throttlePatch;
module.exports.deploymentsAfterGatewayResponses = deploymentsAfterGatewayResponses;
