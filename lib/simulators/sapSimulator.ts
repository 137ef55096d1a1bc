import { classifyErpAnswer } from '../downstream/erp/response.ts';
import type { CallOutcome, DeliveryOutcome } from '../downstream/types.ts';
import { personalValuesOf } from '../privacy/fieldClassification.ts';
import type { SalesRegistration } from '../types.ts';
import { registrationProblem } from './sapRegistrationRules.ts';
import { derivedDigits, RETRY_FAILURES, scenarioOf } from './scenario.ts';
import type { SimulatedRecord } from './types.ts';

const odataError = (message: string) =>
  JSON.stringify({ error: { code: 'SY/530', message: { lang: 'en', value: message } } });

/**
 * The SAP simulator's answer to one registration, read as the SAP adapter reads SAP's own answers (so the record's
 * `error` and `downstreamId` look as they would): the backend's rules first (lib/simulators/sapRegistrationRules.ts,
 * which the SAP sandbox follows too), then the scenario its `Name` asks for.
 *
 * @example
 * simulateRegistration({ id: 'r1', record: sale, attempts: 0 }) // { kind: 'delivered', downstreamId: '49…', reachedDownstream: true }
 */
export const simulateRegistration = ({ id, record, attempts }: SimulatedRecord): DeliveryOutcome => {
  const sale = record as SalesRegistration;
  const personal = personalValuesOf('salesRegistration', sale);
  const problem = registrationProblem({ ...sale, RegistrationId: id });
  if (problem) return classifyErpAnswer(400, odataError(problem), personal);
  switch (scenarioOf(sale.Name)) {
    case 'reject':
      return classifyErpAnswer(
        422,
        odataError('Registration refused by the SAP simulator (test mode: the last name asks for a refusal)'),
        personal,
      );
    case 'fail':
      return classifyErpAnswer(
        503,
        odataError('SAP simulator unavailable (test mode: the last name asks for failures)'),
        personal,
      );
    case 'retry':
      if ((attempts ?? 0) < RETRY_FAILURES)
        return classifyErpAnswer(
          503,
          odataError('SAP simulator busy (test mode: the last name asks for two failures)'),
          personal,
        );
      break;
    case 'deliver':
      break;
  }
  return classifyErpAnswer(
    201,
    JSON.stringify({ d: { DocumentNumber: `49${derivedDigits(id, 6)}`, RegistrationId: id } }),
    personal,
  );
};

/**
 * One simulated `$batch` (or single POST): each registration answered on its own, never a failure of the whole call.
 *
 * @example
 * simulateSapCall([{ id: 'r1', record: sale, attempts: 0 }]).outcomes.get('r1')
 */
export const simulateSapCall = (records: readonly SimulatedRecord[]): CallOutcome => ({
  outcomes: new Map(records.map((record) => [record.id, simulateRegistration(record)])),
});
