/**
 * `npm run redrive -- erp|crm [--stage <stage>] [--region <region>]`
 *
 * Moves the dead-lettered messages of the ERP (sales registrations) or CRM (cases) queue back to their queue and
 * puts their records back to `accepted`. Without --stage it works on the running local service (`npm start`),
 * whose queue lives in its memory; with --stage it works on that AWS stage, with SQS's message move task.
 */

import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { queueArnByName } from '../lib/redrive/queueArn.ts';
import { redriveByHand, redriveOnAws } from '../lib/redrive/redrive.ts';
import { localClientConfig } from '../local/aws.ts';
import { defaultDataDir, oslsScript, projectRoot } from '../local/project.ts';
import type { ResolvedServerlessConfig } from '../local/serverlessConfig.ts';
import { UsageError } from '../tools/cli/commandLine.ts';
import { parseRedriveArgs, type RedriveOptions, USAGE } from '../tools/redrive/args.ts';

let options: RedriveOptions;
try {
  options = parseRedriveArgs(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  // Refused before anything is read or changed.
  console.error(`npm run redrive: ${error.message}\n${USAGE}`);
  process.exit(2);
}
const { target, kind, stage } = options;
const [queueId, deadLetterId] =
  kind === 'salesRegistration'
    ? ['SalesRegistrationQueue', 'SalesRegistrationDeadLetterQueue']
    : ['CaseQueue', 'CaseDeadLetterQueue'];

/** Written by the local runner while it runs: its endpoints and the settings it gave the handlers. */
interface RunnerInfo {
  sqsEndpoint: string;
  dynamoEndpoint: string;
  env: Record<string, string>;
  queues: Record<string, { url: string }>;
}

/** Failed records left failed: their personal data is gone (lib/retention), so they could not be delivered. */
const reportPersonalDataRemoved = (count: number | undefined): void => {
  if (count)
    console.log(
      `${count} failed record(s) not redriven: their personal data was removed after the retention time ` +
        '(PERSONAL_DATA_RETENTION_DAYS, twice that for failed records); the client must send them again',
    );
};

if (stage === undefined) {
  const infoFile = join(process.env.DATA_DIR ?? defaultDataDir(), 'runner.json');
  const info = JSON.parse(await readFile(infoFile, 'utf8').catch(() => 'null')) as RunnerInfo | null;
  if (!info) {
    console.error(
      `no running local service (${infoFile} is missing): start it with npm start, or pass --stage`,
    );
    process.exit(1);
  }
  Object.assign(process.env, info.env, {
    AWS_ENDPOINT_URL_SQS: info.sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: info.dynamoEndpoint,
  });
  const sqs = new SQSClient({ ...localClientConfig(info.sqsEndpoint), useQueueUrlAsEndpoint: false });
  const { moved, requeued, personalDataRemoved } = await redriveByHand({
    sqs,
    kind,
    queueUrl: info.queues[queueId].url,
    deadLetterQueueUrl: info.queues[deadLetterId].url,
  });
  console.log(
    `redrive ${target}: moved ${moved} message(s) back to the queue; their records are accepted again` +
      (requeued > 0 ? `; queued ${requeued} failed record(s) whose messages were gone (a restart)` : ''),
  );
  reportPersonalDataRemoved(personalDataRemoved);
} else {
  const config = JSON.parse(
    execFileSync(process.execPath, [oslsScript, 'print', '--stage', stage, '--format', 'json'], {
      cwd: projectRoot,
      encoding: 'utf8',
      maxBuffer: 32 * 1024 * 1024,
    }),
  ) as ResolvedServerlessConfig;
  const resources = config.resources?.Resources ?? {};
  const nameOf = (id: string, key: string) => String(resources[id]?.Properties?.[key] ?? '');
  const region = options.region ?? config.provider.region;
  const sqs = new SQSClient({ region });
  const arnOf = (id: string) => queueArnByName(sqs, nameOf(id, 'QueueName'));
  process.env.RECORDS_TABLE = nameOf('RecordsTable', 'TableName');
  // The reopened records' `accepted` events go to the stage's bus (left for the reconciler if it cannot be reached).
  process.env.EVENT_BUS_NAME = nameOf('EventBus', 'Name');
  process.env.AWS_REGION = region;
  const result = await redriveOnAws(sqs, kind, {
    queueArn: await arnOf(queueId),
    deadLetterQueueArn: await arnOf(deadLetterId),
  });
  console.log(
    `redrive ${target} (${stage}): ${result.reopened} record(s) accepted again; move task ${result.taskHandle}`,
  );
  reportPersonalDataRemoved(result.personalDataRemoved);
}
