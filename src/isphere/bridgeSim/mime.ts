/** The client guesses a sent file's type from its name, as a mail client would; these are the ones worth naming. */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
  json: 'application/json',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

export function mimeTypeOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return (dot >= 0 && BY_EXTENSION[fileName.slice(dot + 1).toLowerCase()]) || 'application/octet-stream';
}
