import type { RecordKind } from '../../lib/types.ts';

/** The names --kind takes, and the kinds they stand for. */
export const KIND_NAMES: Record<string, RecordKind> = {
  sales: 'salesRegistration',
  cases: 'caseRecord',
  salesRegistration: 'salesRegistration',
  caseRecord: 'caseRecord',
};

/** The values --mode takes: a test client's records, or a live client's. */
export const CLIENT_MODES = ['test', 'live'] as const;

/** How a kind is shown in the table. */
export const KIND_LABELS: Record<RecordKind, string> = { salesRegistration: 'sales', caseRecord: 'cases' };

/** --region when none is given with --stage. */
export const DEFAULT_REGION = 'eu-west-1';

/** The width the table gives the downstream id / error column before it cuts the text. */
export const DETAIL_WIDTH = 60;

/** What stands in place of a personal value in the one-record view. */
export const MASK = '***';

export const USAGE = `usage:
  npm run records -- [--status accepted|delivered|rejected|failed] [--older-than 30m|2h|3d] [--kind sales|cases]
                     [--client <name>] [--mode test|live] [--dealer <n>] [--frame <FrameNum>] [--counts] [--json]
                     [--limit N]
                     [--progress] [--stage <stage> [--region <region>]]
  npm run records -- <id> [--json] [--show-personal | --stage <stage> [--region <region>]]
  npm run records -- --trace <recordId|traceId> [--json]   (the trace npm start kept, as a waterfall)
Without --stage it reads the running npm start; --json writes one JSON object a line (NDJSON).`;
