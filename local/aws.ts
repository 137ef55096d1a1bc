/** SDK client settings for the local SQS / DynamoDB emulators (dummy credentials, fixed region). */
import { localRegion } from './project.ts';

export const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };

export function localClientConfig(endpoint: string) {
  return { endpoint, region: localRegion, credentials: localCredentials, maxAttempts: 1 };
}
