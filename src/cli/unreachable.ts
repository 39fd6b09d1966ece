/** Why a gateway could not be reached, in one sentence that says what to check. */
export function unreachable(url: string, err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `could not reach ${url} (${why}); is \`npm start\` running? (--url or DIPPER_URL names another gateway)`;
}
