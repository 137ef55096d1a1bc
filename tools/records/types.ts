import type { ClientMode } from '../../lib/clients/types.ts';
import type { RecordStatus } from '../../lib/records/types.ts';
import type { RecordKind } from '../../lib/types.ts';

/** What `npm run records` was asked to do, as parsed from its arguments (tools/records/args.ts). */
export interface RecordsOptions {
  /** A listing, counts by state, or one record in full. */
  mode: 'list' | 'counts' | 'one' | 'trace';
  /** With mode `trace`: a record id or a trace id, whose trace npm start kept is drawn. */
  trace?: string;
  /** With mode `one`: the record's id. */
  id?: string;
  /** The states listed or counted: every state unless --status named one. */
  statuses: RecordStatus[];
  /** The kinds listed or counted: both unless --kind named one. */
  kinds: RecordKind[];
  /** --older-than, in milliseconds: only records accepted longer ago than this. */
  olderThanMs?: number;
  client?: string;
  /** --mode: only test clients' records (`test`) or only live ones (`live`); both when absent. */
  clientMode?: ClientMode;
  dealer?: number;
  frame?: string;
  json: boolean;
  limit?: number;
  /** An AWS stage (its table `dealer-gateway-<stage>-records`); the running `npm start` when absent. */
  stage?: string;
  region: string;
  /** With mode `one`: show the personal fields of `record` instead of masking them. */
  showPersonal: boolean;
  /** A progress line on stderr: when stderr is a terminal, or with --progress. */
  progress: boolean;
  help: boolean;
}

/** One row of a listing: what the `status` index holds of a record, under the names the output documents. */
export interface RecordRow {
  id: string;
  kind: RecordKind;
  status: RecordStatus;
  client: string;
  dealer?: number;
  frameNum?: string;
  attempts: number;
  acceptedAt: string;
  updatedAt: string;
  downstreamId?: string;
  error?: string;
}
