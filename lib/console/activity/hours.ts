import type { Downstream } from '../../outage/types.ts';

/** One hour of one downstream on the "Activity" page. */
export interface ActivityHour {
  /** The hour's start (ISO, UTC, whole hour). */
  hour: string;
  downstream: Downstream;
  accepted: number;
  delivered: number;
  failed: number;
}

/** Where the hours come from: the service's CloudWatch metrics on AWS, the store under npm start. */
export interface ActivitySource {
  /** The 24 hours up to and including the one `now` is in, oldest first, for each downstream. */
  hours(now: Date): Promise<ActivityHour[]>;
}

/** The 24 hour starts (epoch ms) up to the one `now` is in, oldest first. */
export const lastDayHours = (now: Date): number[] => {
  const current = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  return Array.from({ length: 24 }, (_, i) => current - (23 - i) * 3_600_000);
};

/** Empty hours for both downstreams, to be counted into: every hour shows, also one with nothing. */
export const emptyHours = (now: Date): ActivityHour[] =>
  (['erp', 'crm'] as const).flatMap((downstream) =>
    lastDayHours(now).map((start) => ({
      hour: new Date(start).toISOString(),
      downstream,
      accepted: 0,
      delivered: 0,
      failed: 0,
    })),
  );
