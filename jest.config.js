/** Tests run against a real Temporal dev server, worker and gateway started once in globalSetup. */
module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/setup/globalSetup.ts',
  globalTeardown: '<rootDir>/test/setup/globalTeardown.ts',
  testTimeout: 60_000,
  maxWorkers: 1,
  // `npm test` runs the suite as two lanes at once (--shard=1/2 and 2/2); this says which files each takes.
  testSequencer: '<rootDir>/test/setup/lanes.js',
  reporters: ['default', '<rootDir>/test/setup/timingsReporter.js'],
};
