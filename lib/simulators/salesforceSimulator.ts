import { DEFAULT_CASE_EXTERNAL_ID_FIELD } from '../downstream/crm/constants.ts';
import { mapCase } from '../downstream/crm/mapping.ts';
import { classifyCrmAnswer } from '../downstream/crm/response.ts';
import type { CaseMapping } from '../downstream/crm/types.ts';
import type { CallOutcome, DeliveryOutcome } from '../downstream/types.ts';
import { personalValuesOf } from '../privacy/fieldClassification.ts';
import type { CaseRecord } from '../types.ts';
import { caseProblems } from './salesforceCaseRules.ts';
import { derivedDigits, RETRY_FAILURES, scenarioOf } from './scenario.ts';
import type { SimulatedRecord } from './types.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const errors = (errorCode: string, message: string) => JSON.stringify([{ message, errorCode, fields: [] }]);

/**
 * The Salesforce simulator's answer to one case, read as the Salesforce adapter reads Salesforce's own answers:
 * the case mapped as for an upsert, Salesforce's rules for Case (lib/simulators/salesforceCaseRules.ts, which the
 * Salesforce sandbox follows too), then the scenario its `surname` asks for. A delivered case gets an 18-character
 * id beginning `500`.
 *
 * @example
 * simulateCase({ id: 'c1', record: caseRecord, attempts: 0 }, DEFAULT_CASE_MAPPING) // { kind: 'delivered', downstreamId: '500…' }
 */
export const simulateCase = (
  { id, record, attempts }: SimulatedRecord,
  mapping: CaseMapping,
): DeliveryOutcome => {
  const caseRecord = record as CaseRecord;
  const personal = personalValuesOf('caseRecord', caseRecord);
  const problems = caseProblems(mapCase(caseRecord, mapping), {
    externalIdField: DEFAULT_CASE_EXTERNAL_ID_FIELD,
    creating: true,
    extraFields: [],
  });
  if (problems.length > 0) return classifyCrmAnswer(400, JSON.stringify(problems), personal);
  switch (scenarioOf(caseRecord.surname)) {
    case 'reject':
      return classifyCrmAnswer(
        400,
        errors(
          'FIELD_CUSTOM_VALIDATION_EXCEPTION',
          'Case refused by the Salesforce simulator (test mode: the last name asks for a refusal)',
        ),
        personal,
      );
    case 'fail':
      return classifyCrmAnswer(
        400,
        errors(
          'UNABLE_TO_LOCK_ROW',
          'unable to obtain exclusive access to this record (test mode: the last name asks for failures)',
        ),
        personal,
      );
    case 'retry':
      if ((attempts ?? 0) < RETRY_FAILURES)
        return classifyCrmAnswer(
          400,
          errors(
            'UNABLE_TO_LOCK_ROW',
            'unable to obtain exclusive access to this record (test mode: the last name asks for two failures)',
          ),
          personal,
        );
      break;
    case 'deliver':
      break;
  }
  return classifyCrmAnswer(
    201,
    JSON.stringify({ id: `500${derivedDigits(id, 15, BASE62)}`, success: true, errors: [] }),
    personal,
  );
};

/**
 * One simulated Collections call (or single upsert): each case answered on its own, never a failure of the whole call.
 *
 * @example
 * simulateSalesforceCall([{ id: 'c1', record: caseRecord }], DEFAULT_CASE_MAPPING).outcomes.get('c1')
 */
export const simulateSalesforceCall = (
  records: readonly SimulatedRecord[],
  mapping: CaseMapping,
): CallOutcome => ({
  outcomes: new Map(records.map((record) => [record.id, simulateCase(record, mapping)])),
});
