/**
 * What in an approval's words a person could not see as it reads: controls
 * that reorder text (bidi overrides, which make "ACME \u202Egnp.exe\u202C"
 * read as "ACME exe.png"), characters that take no space, and text far below
 * the first lines.
 */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
const INVISIBLE = /[\u00AD\u115F\u1160\u180E\u200B-\u200D\u2060-\u2064\u3164\uFEFF\u{E0000}-\u{E007F}]/gu;
/** Lines a card shows before the rest is out of sight. */
export const LINES_IN_VIEW = 20;

const codePoint = (c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Warnings about the text, each one sentence, or none. */
export function hiddenTextWarnings(text) {
  const warnings = [];
  const bidi = text.match(BIDI) ?? [];
  const invisible = text.match(INVISIBLE) ?? [];
  const lines = text.split('\n').length;
  if (bidi.length) warnings.push(`${bidi.length} character${bidi.length === 1 ? '' : 's'} that reorder text (${[...new Set(bidi.map(codePoint))].join(', ')}): what you read may not be the order that is sent.`);
  if (invisible.length) warnings.push(`${invisible.length} invisible character${invisible.length === 1 ? '' : 's'} (${[...new Set(invisible.map(codePoint))].join(', ')}).`);
  if (lines > LINES_IN_VIEW) warnings.push(`${lines} lines: read to the end, the text goes on below the first ${LINES_IN_VIEW}.`);
  return warnings;
}

/** The text with each reordering or invisible character shown as its code point, e.g. "[U+202E]". */
export function markHidden(text) {
  return text.replace(BIDI, (c) => `[${codePoint(c)}]`).replace(INVISIBLE, (c) => `[${codePoint(c)}]`);
}
