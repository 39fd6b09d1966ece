import { HISTORY_CHANNEL_ARGS, replayingProcess } from '../ops/replayAll';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalTarget, type DipperConfig } from '../config';
import { writeWorkflowBundle } from '../devstack/bundle';
import { diagnose, repair } from '../ops/doctor';
import { Temporal } from '../temporal';
import { buildIdOf } from '../versioning/buildId';

/**
 * `dipper doctor [--repair]`: replays every running workflow with the code
 * of this checkout, lists the broken and the stuck, and with --repair
 * resets each nondeterministic one to its last good workflow task.
 * Exit 0 when nothing is wrong (or everything found was repaired).
 */
export async function doctor(config: DipperConfig, opts: { repair: boolean; runId?: string }): Promise<number> {
  const threads = replayingProcess('doctor');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-doctor-'));
  const temporal = await Temporal.connect({ ...temporalTarget(config), namespace: config.temporal.namespace, channelArgs: HISTORY_CHANNEL_ARGS });
  try {
    const bundlePath = path.join(dir, 'workflow-bundle.js');
    await writeWorkflowBundle(bundlePath);
    const buildId = config.versioning.buildId ?? buildIdOf(fs.readFileSync(bundlePath));
    const o = { temporal, bundlePath, buildId, runId: opts.runId };
    const { findings, replay } = await diagnose(o);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(`Replayed ${replay.replayed} running workflows in ${(replay.ms / 1000).toFixed(1)} s: ${findings.length} need attention.`);
    if (replay.skipped.length > 0) out(`Skipped ${replay.skipped.length} pinned to other builds than ${buildId}: their own workers run them.`);
    let unrepaired = 0;
    for (const f of findings) {
      out(`  ${f.kind}: ${f.workflowId}`);
      out(`    ${f.message.slice(0, 240)}`);
      if (!opts.repair) {
        unrepaired++;
        continue;
      }
      if (f.kind === 'nondeterministic' && f.resetEventId !== undefined) {
        await repair(o, f);
        out(`    repaired: reset to the workflow task completed at event ${f.resetEventId}; later Signals and Updates reapplied`);
      } else {
        unrepaired++;
        out('    no automatic repair: see docs/reliability.md');
      }
    }
    if (findings.length > 0 && !opts.repair) out('Run `npm run dipper -- doctor --repair` to repair what can be.');
    return unrepaired === 0 ? 0 : 1;
  } finally {
    await temporal.close();
    threads.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
