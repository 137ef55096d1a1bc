import type { Client } from './types.ts';

/** A webhook's calls per second by default. */
export declare const DEFAULT_WEBHOOK_RATE_LIMIT: number;
/** The most calls per second a webhook may ask for. */
export declare const MAX_WEBHOOK_RATE_LIMIT: number;
/** Whether a (valid) webhook URL points at this machine (localhost or 127.0.0.1). */
export declare const isLocalWebhookUrl: (url: string) => boolean;
/** The first problem of one client's webhook, naming the client and the field; undefined when it is fine. */
export declare const webhookProblem: (client: Pick<Client, 'name' | 'webhook'>) => string | undefined;
