import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { getStatusRecords } from '../../lib/store/statusRecords.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { startFaultyProxy } from '../../testkit/faultyProxy.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

/*
 * DynamoDB wrote the record but its answer never arrived: the AWS client tries again, and the conditional write
 * finds the record that this very request wrote. It must still be queued, exactly once.
 */
let aws: Awaited<ReturnType<typeof isolatedAws>>;
let dynamoProxy: Awaited<ReturnType<typeof startFaultyProxy>>;

beforeAll(async () => {
  aws = await isolatedAws();
  // Before any client exists: the service reaches DynamoDB only through the proxy.
  dynamoProxy = await startFaultyProxy(aws.dynamoEndpoint, 'PutItem');
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamoProxy.endpoint;
});

afterAll(() => dynamoProxy.stop());

describe('a lost DynamoDB answer', () => {
  it('still queues the single record of the request, once', async () => {
    // Prepare
    dynamoProxy.loseAnswerOnce();
    const event = jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame() })]);
    // Act
    const response = await salesHandler(event, lambdaContext());
    const messages = await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    // Assess
    expect(response.statusCode).toBe(200);
    const [{ id }] = JSON.parse(response.body).registrations;
    expect(dynamoProxy.calls.filter((op) => op === 'PutItem')).toHaveLength(2);
    expect(messages.map((m) => m.id)).toEqual([id]);
    expect((await getStatusRecords([id])).get(id)).toMatchObject({ status: 'accepted', attempts: 0 });
  });

  it('does not queue again what an earlier request already queued', async () => {
    // Prepare
    const body = [salesRegistrationInput({ FrameNum: uniqueFrame() })];
    await salesHandler(jsonPost('/erp/sales_registration', body), lambdaContext());
    await aws.drain(aws.resources.queues.SalesRegistrationQueue.url);
    // Act: a second request with the same content, whose write's answer is lost as well
    dynamoProxy.loseAnswerOnce();
    const again = await salesHandler(jsonPost('/erp/sales_registration', body), lambdaContext());
    // Assess
    expect(again.statusCode).toBe(200);
    expect(await aws.drain(aws.resources.queues.SalesRegistrationQueue.url)).toEqual([]);
  });
});
