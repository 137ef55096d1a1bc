/**
 * The document's examples: valid requests that the service's own validators accept, invalid ones whose 400
 * texts the validators write, record ids the service would give, and answer bodies built by the real response
 * shapes of `lib/http/shapes.ts`. Nothing here is a copy of what the service says.
 */
import { contentId } from '../../lib/intake/recordIds.ts';
import { validateCaseRecord } from '../../lib/validation/caseRecord.ts';
import { formatProblem } from '../../lib/validation/format.ts';
import { validateSalesRegistrations } from '../../lib/validation/salesRegistration.ts';
import type { Json, JsonObject } from './schemaConversion.ts';

/** The examples' dates are judged as of this day, so the document does not change with the calendar. */
const EXAMPLES_AS_OF = new Date('2026-11-01T00:00:00Z');
/** An API Gateway request id, as 5xx answers quote it. */
export const EXAMPLE_REFERENCE = '8a1f6c2e-5b7d-4c3a-9e0f-1d2c3b4a5f60';

/** A private sale with every optional field of a private buyer. */
export const privateSale: JsonObject = {
  DealerId: 1234,
  FrameNum: 'EXAMPLEFRAME00001',
  Model: 'Example Roadster 650',
  SaleDate: '2026-10-14',
  Name: 'Sample',
  Name2: 'Alex',
  Street: '1 Example Street',
  Town: 'Exampleton',
  Postcode: '2000',
  State: 'NSW',
  email: 'alex.sample@example.com',
  Phone: '+61 400 000 001',
  CommPriv: 'P',
  MoreInfo: 'Y',
  DOB: '1988-04-02',
  Sex: 'F',
};

/** A commercial sale, by a business-partner number, with a numeric postcode. */
export const commercialSale: JsonObject = {
  DealerId: 100234,
  FrameNum: 'EXAMPLEFRAME00002',
  Model: 'Example Courier 125',
  SaleDate: '2026-10-15',
  Name: 'Placeholder',
  Name2: 'Jordan',
  CompanyName: 'Example Couriers Pty Ltd',
  Street: '2 Sample Road',
  Town: 'Testville',
  Postcode: 3000,
  email: 'fleet@example.com',
  Phone: '+61 3 9000 0002',
  CommPriv: 'C',
  Finance: 'Dealer finance',
};

/** A commercial sale with four problems. */
export const invalidSale: JsonObject = {
  ...commercialSale,
  DealerId: 12345,
  FrameNum: 'EXAMPLEFRAME00003',
  SaleDate: '2026-02-30',
  email: 'jordan.placeholder',
  CompanyName: '  ',
};

/** A case as a web page posts it in JSON. */
export const jsonCase: JsonObject = {
  title: 'Mx',
  firstName: 'Alex',
  surname: 'Example',
  email: 'alex.example@example.com',
  mobile: '+61 400 000 002',
  addressPostcode: '3000',
  privacyConsent: true,
  subscribeToBrand: false,
  ownBrand: true,
  siteName: 'Motorcycles',
  comments: 'Please call me about a test ride.',
  origin: 'Website contact form',
  frameNo: 'EXAMPLEFRAME00001',
};

/** A case as an HTML form posts it: strings only, a checkbox left out, `vin-frame`, a submit button. */
export const formCase: JsonObject = {
  firstName: 'Sam',
  surname: 'Placeholder',
  email: 'sam.placeholder@example.com',
  homePhone: '+61 2 9000 0003',
  privacyConsent: 'on',
  ownBrand: 'no',
  siteName: 'Power equipment',
  comments: 'My mower will not start.',
  'vin-frame': 'EXAMPLEFRAME00004',
  submit: 'Send',
};

/** A case with several problems, among them two different frame numbers. */
export const invalidCase: JsonObject = {
  firstName: ' ',
  surname: 'Example',
  email: 'alex.example',
  frameNo: 'EXAMPLEFRAME00001',
  'vin-frame': 'EXAMPLEFRAME00009',
};

/**
 * What the validators say about an invalid sales registration body, as the 400 answer words it; a valid body
 * here is a bug.
 *
 * @example
 * salesProblems([]) // 'body must hold at least one sales registration record'
 */
export const salesProblems = (body: Json): string => {
  const result = validateSalesRegistrations(structuredClone(body), EXAMPLES_AS_OF);
  if (result.ok) throw new Error('an invalid sales registration example is valid');
  return result.problems.map(formatProblem).join('; ');
};

/** What the validators say about an invalid case, as the 400 answer words it; a valid case here is a bug. */
export const caseProblems = (body: Json): string => {
  const result = validateCaseRecord(structuredClone(body));
  if (result.ok) throw new Error('an invalid case example is valid');
  return result.problems.map(formatProblem).join('; ');
};

/**
 * The key of content ids the examples are derived under: each stage has its own secret one (lib/intake/contentIdKey.ts),
 * so an example id is what a stage with this key would give, not what any deployed stage gives.
 */
const EXAMPLE_CONTENT_ID_KEY = 'example-stage-content-id-key';

/** The ids the service gives the example records: ids are derived from the normalised content. */
export const salesIds = (body: Json[]): string[] => {
  const result = validateSalesRegistrations(structuredClone(body), EXAMPLES_AS_OF);
  if (!result.ok)
    throw new Error(`a sales registration example is invalid: ${result.problems.map(formatProblem)}`);
  return result.value.map((record) =>
    contentId(EXAMPLE_CONTENT_ID_KEY, 'salesRegistration', record, 'example-dealer'),
  );
};

/** The `CrmId` the service gives an example case. */
export const caseId = (body: Json): string => {
  const result = validateCaseRecord(structuredClone(body));
  if (!result.ok) throw new Error(`a case example is invalid: ${result.problems.map(formatProblem)}`);
  return contentId(EXAMPLE_CONTENT_ID_KEY, 'caseRecord', result.value, 'example-web-forms');
};

/**
 * The body of a real answer, parsed when the shape answers JSON.
 *
 * @example
 * bodyOf(statusShape.refused(404, 'no case with this CrmId')) // { message: 'no case with this CrmId' }
 */
export const bodyOf = (response: { body: string; headers?: Record<string, unknown> }): Json =>
  String(response.headers?.['content-type']).startsWith('application/json')
    ? (JSON.parse(response.body) as Json)
    : response.body;

/**
 * An Example Object.
 *
 * @example
 * example('Body too large', refused(413, 'body must be at most 64 KiB'))
 */
export const example = (summary: string, value: Json, description?: string): JsonObject =>
  description === undefined ? { summary, value } : { summary, description, value };
