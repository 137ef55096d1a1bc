/**
 * Recognisable personal values for the records hostile and property tests generate. Every generated name,
 * e-mail address, phone and street carries LEAK_MARKER, and dates of birth are MARKER_DOB, so the log scan at
 * the end of the run (testkit/globalSetup.ts) finds them in any log line however the rest was generated.
 */
export const LEAK_MARKER = 'Qzleakmark';

/** A date of birth no log line has otherwise (timestamps are of this century). */
export const MARKER_DOB = '1911-11-11';

/** The strings the log scan looks for besides the factories' personal values. */
export const markerValues = [LEAK_MARKER, MARKER_DOB];

/** A marked name, street or phone: `Qzleakmark<suffix>`. */
export const marked = (suffix: string | number = ''): string => `${LEAK_MARKER}${suffix}`;

/** A marked, valid e-mail address. */
export const markedEmail = (suffix: string | number = ''): string =>
  `${LEAK_MARKER.toLowerCase()}${suffix}@example.com`;
