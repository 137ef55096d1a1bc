/** Downstream error texts are cut to about this many characters before they are stored. */
export const MAX_ERROR_TEXT_LENGTH = 500;
