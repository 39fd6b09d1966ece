// @ts-check
const fs = require('node:fs');
const path = require('node:path');

/**
 * Prints the slowest test files and tests at the end of a run, and writes
 * every file's and test's time to .test-data/timings.json: where CI's
 * minutes go, measured on the machine that spent them.
 */
class TimingsReporter {
  /** @param {any} _globalConfig @param {any} _options @param {any} context */
  constructor(_globalConfig, _options, context) {
    this.root = context?.config?.rootDir ?? process.cwd();
    /** @type {{ file: string, seconds: number, tests: { title: string, seconds: number }[] }[]} */
    this.files = [];
  }

  /** @param {any} _test @param {any} result */
  onTestResult(_test, result) {
    const seconds = (result.perfStats.end - result.perfStats.start) / 1000;
    const tests = result.testResults.map((/** @type {any} */ t) => ({ title: t.fullName, seconds: (t.duration ?? 0) / 1000 }));
    this.files.push({ file: path.relative(this.root, result.testFilePath), seconds, tests });
  }

  onRunComplete() {
    const line = (/** @type {number} */ s, /** @type {string} */ name) => `  ${s.toFixed(1).padStart(6)} s  ${name}`;
    const files = [...this.files].sort((a, b) => b.seconds - a.seconds);
    const tests = this.files.flatMap((f) => f.tests.map((t) => ({ ...t, file: f.file }))).sort((a, b) => b.seconds - a.seconds);
    const total = this.files.reduce((sum, f) => sum + f.seconds, 0);
    const inTests = tests.reduce((sum, t) => sum + t.seconds, 0);
    process.stdout.write(
      `\n${this.files.length} files took ${total.toFixed(0)} s, ${inTests.toFixed(0)} s of it inside tests; the slowest files:\n` +
        files.slice(0, 12).map((f) => line(f.seconds, f.file)).join('\n') +
        '\nthe slowest tests:\n' +
        tests.slice(0, 12).map((t) => line(t.seconds, `${t.file}: ${t.title.slice(0, 100)}`)).join('\n') +
        '\n',
    );
    // Each of `npm test`'s two lanes keeps its own (test/setup/lanes.js).
    const lane = process.env.DIPPER_TEST_LANE ? `-lane${process.env.DIPPER_TEST_LANE}` : '';
    const out = path.join(this.root, '.test-data', `timings${lane}.json`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(files, null, 1));
  }
}

module.exports = TimingsReporter;
