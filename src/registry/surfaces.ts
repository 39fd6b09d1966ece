/**
 * The surfaces Dipper serves, in the registry's order. A constant of its
 * own so the CLI can name them without loading every tool's schemas;
 * test/registry/schemas.test.ts checks the registry's tools say the same.
 */
export const SERVED_SURFACES = ['beidou', 'agentteam', 'isphere'] as const;
