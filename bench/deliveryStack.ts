import { startLocalEventBus } from '../local/eventBus.ts';
import { startLocalAws } from './localAws.ts';
import { awsFreeEnv, quietPowertools, runNodeJson } from './proc.ts';
import { downstreamEnv, startSandboxes } from './sandboxes.ts';

/** The bus the benches' workers publish to. */
export const BENCH_BUS = 'dealer-gateway-bench';

/**
 * Starts the stack, runs `args` with Node in a child with the stack's environment plus `env`, and returns what the
 * child printed as JSON; stops the stack whatever happens.
 *
 * @example
 * const result = await inDeliveryStack<FairShareResult>('fair', [`${benchDir}/fairShare.ts`, '--child'], { BENCH_FAIR_SIZES: '[10000]' });
 */
export const inDeliveryStack = async <T>(
  _name: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<T> => {
  const [aws, sandboxes] = await Promise.all([startLocalAws(), startSandboxes()]);
  const bus = await startLocalEventBus({
    busNames: [BENCH_BUS],
  });
  try {
    return await runNodeJson<T>(args, {
      ...awsFreeEnv(),
      ...quietPowertools,
      ...aws.info.env,
      ...downstreamEnv(sandboxes.info),
      AWS_ENDPOINT_URL_SQS: aws.info.sqs,
      AWS_ENDPOINT_URL_DYNAMODB: aws.info.dynamodb,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
      EVENT_BUS_NAME: BENCH_BUS,
      BENCH_SANDBOXES: JSON.stringify(sandboxes.info),
      ...env,
    });
  } finally {
    await Promise.all([aws.stop(), sandboxes.stop(), bus.stop()]);
  }
};
