import { personalValuesOf } from '../privacy/fieldClassification.ts';
import { safeErrorText } from '../privacy/redaction.ts';
import type { StatusRecord } from '../records/types.ts';

/** What the purge writes of a settled record: its kept fields, and every stored text without its personal values. */
export type PurgedParts = Pick<StatusRecord, 'error' | 'history' | 'pendingEvents'>;

/**
 * The texts a record stores besides `record` (its last `error`, each `history[].error`, each `pendingEvents[].error`)
 * with every personal value of the record blanked out, as the adapters blank them out of a downstream's answer
 * (the one classification, lib/privacy/fieldClassification.ts, says which values). A text stored before a field was
 * classed personal, or echoed in a form the adapter missed then, loses it here at the latest. Absent parts stay
 * absent; the record given is not changed.
 *
 * @example
 * withoutPersonalValues({ kind: 'caseRecord', record: { firstName: 'Ana' }, error: 'Ana is taken' } as StatusRecord)
 * // { error: '[redacted] is taken' }
 */
export const withoutPersonalValues = (status: StatusRecord): PurgedParts => {
  const values = personalValuesOf(status.kind, status.record ?? {});
  const clean = (text: string | undefined) => (text === undefined ? undefined : safeErrorText(text, values));
  const parts: PurgedParts = {};
  if (status.error !== undefined) parts.error = clean(status.error);
  if (status.history) {
    parts.history = status.history.map((step) =>
      step.error === undefined ? step : { ...step, error: clean(step.error) },
    );
  }
  if (status.pendingEvents) {
    parts.pendingEvents = status.pendingEvents.map((pending) =>
      pending.error === undefined ? pending : { ...pending, error: clean(pending.error) },
    );
  }
  return parts;
};
