import { describe, expect, it } from 'vitest';
import { dynamoClient, secretsManagerClient, sqsClient } from '../../lib/aws/clients.ts';
import { JsonProtocolClient } from '../../lib/aws/jsonProtocol/client.ts';

/*
 * One seam: lib/aws/clients.ts gives every function the JSON-protocol clients, imported as they run (no module
 * resolution swaps anywhere); the tests' own helpers use the SDK, so what they read back was not read through the
 * code under test.
 */
describe('the AWS clients the service code gets', () => {
  it('are the JSON-protocol clients, one of each kind per container', () => {
    // Prepare
    Object.assign(process.env, { AWS_REGION: 'eu-west-1' });
    // Act
    const clients = [dynamoClient(), sqsClient(), secretsManagerClient()];
    // Assess
    for (const client of clients) expect(client).toBeInstanceOf(JsonProtocolClient);
    expect(dynamoClient()).toBe(clients[0]);
  });
});
