/** Tests run against a real Temporal dev server, worker and gateway started once in globalSetup. */
module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/setup/globalSetup.ts',
  globalTeardown: '<rootDir>/test/setup/globalTeardown.ts',
  testTimeout: 60_000,
  maxWorkers: 1,
  reporters: ['default', '<rootDir>/test/setup/timingsReporter.js'],
};
