// @ts-check
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * `npm test` runs two jest processes at once (src/cli/testLanes.ts), each with a whole test stack of its own on its
 * own ports: the in-band run left a third of the machine idle while tests waited on timers, restarts and kills. The
 * second lane takes these files: long, mostly waiting, and each on processes of its own, so the lane that runs the
 * rest is not slowed by what they kill. None uses PostgreSQL or the nftables fence, which the first lane's files share.
 * Seconds are from a CI run alone on 2 cores (.test-data/timings.json); keep the lanes within a minute of each other.
 */
const SECOND_LANE = {
  'test/durability/crashSoak.test.ts': 87,
  'test/durability/doctor.test.ts': 50,
  'test/durability/maxState.test.ts': 53,
  'test/e2e/claudeRuntime.test.ts': 51,
  'test/e2e/claudeTeam.test.ts': 37,
  'test/durability/workerCrash.test.ts': 34,
  'test/durability/backgroundFailures.test.ts': 33,
  'test/cli/supervisor.test.ts': 32,
  'test/durability/watchdog.test.ts': 30,
  'test/isphere/crashAfterAccept.test.ts': 28,
  'test/gateway/outage.test.ts': 25,
  'test/durability/upgrade.test.ts': 24,
  'test/cli/backup.test.ts': 23,
  'test/durability/property.test.ts': 23,
  'test/durability/questions.test.ts': 17,
  'test/durability/continueAsNew.test.ts': 17,
  // Lane 1 ran 928 s to lane 2's 795 s at ce65792 (the doctor test lost its third stack): these two went across.
  'test/cli/demo.test.ts': 37,
  'test/cli/exec.test.ts': 33,
};

/** Lane 2 of 2 is the files above, lane 1 every other; any other shard count splits as jest does. */
class Lanes extends Sequencer {
  /** @param {import('@jest/test-result').Test[]} tests @param {{ shardIndex: number, shardCount: number }} options */
  shard(tests, options) {
    if (options.shardCount !== 2) return super.shard(tests, options);
    const second = (/** @type {import('@jest/test-result').Test} */ t) => path.relative(t.context.config.rootDir, t.path) in SECOND_LANE;
    return tests.filter((t) => second(t) === (options.shardIndex === 2));
  }
}

module.exports = Lanes;
module.exports.SECOND_LANE = SECOND_LANE;
