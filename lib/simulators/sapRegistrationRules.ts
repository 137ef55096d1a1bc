/** Properties of the sandbox's SalesRegistration entity type; SAP refuses any other property. */
const PROPERTIES = new Set([
  'DealerId',
  'FrameNum',
  'Model',
  'SaleDate',
  'Name',
  'Name2',
  'CompanyName',
  'Street',
  'Floor',
  'Town',
  'Postcode',
  'State',
  'email',
  'Phone',
  'CommPriv',
  'RiderTraining',
  'MoreInfo',
  'AllowSharing',
  'Operator',
  'Finance',
  'Promo',
  'Cashback',
  'DOB',
  'Sex',
  'RegistrationId',
]);

const REQUIRED_TEXT = [
  'FrameNum',
  'SaleDate',
  'Name',
  'Name2',
  'Street',
  'email',
  'Phone',
  'CommPriv',
  'RegistrationId',
];

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * What the ERP's backend would refuse in a registration, as an SAP-style message, or undefined.
 * Like SAP it names the first problem only, and like many SAP messages it echoes the offending value
 * (the adapter must keep such values out of its error texts).
 *
 * @example
 * registrationProblem({ DealerId: '1234' }); // "Invalid value for property 'DealerId': not an Edm.Int32"
 */
export function registrationProblem(entity: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(entity).find((key) => !PROPERTIES.has(key));
  if (unknown) return `Property '${unknown}' is invalid`;
  if (entity.DealerId === undefined) return "Property 'DealerId' is required";
  if (typeof entity.DealerId !== 'number' || !Number.isInteger(entity.DealerId)) {
    return "Invalid value for property 'DealerId': not an Edm.Int32";
  }
  for (const [key, value] of Object.entries(entity)) {
    if (key !== 'DealerId' && typeof value !== 'string') {
      return `Invalid value for property '${key}': not an Edm.String`;
    }
  }
  const missing = REQUIRED_TEXT.find((key) => !(entity[key] as string | undefined)?.trim());
  if (missing) return `Property '${missing}' is required`;
  for (const key of ['SaleDate', 'DOB']) {
    const value = entity[key] as string | undefined;
    if (value !== undefined && (!DATE.test(value) || Number.isNaN(Date.parse(value)))) {
      return `Property '${key}' is not a date in the format YYYY-MM-DD`;
    }
  }
  if (entity.CommPriv !== 'C' && entity.CommPriv !== 'P') return "Property 'CommPriv' must be C or P";
  if (!(entity.email as string).includes('@')) return `E-mail address ${entity.email} is not valid`;
  return undefined;
}

/** Same registration content, whatever the property order: a repeat of a delivery. */
export function sameContent(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const canonical = (entity: Record<string, unknown>) =>
    JSON.stringify(Object.entries(entity).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return canonical(a) === canonical(b);
}
