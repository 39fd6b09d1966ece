import path from 'node:path';
import { projectRoot } from '../../src/common/projectRoot';
import type { RuntimeChoice } from '../../src/config';

/**
 * A `claude` runtime is a command runtime whose command is Dipper's own
 * (bin/claude-runtime.js, on the node that runs the worker), so everything
 * a command gets applies: the payload on stdin, the environment built from
 * nothing, another OS user, the network fence, supervision and the crash
 * ladder. What it adds: where the model proxy is (the agent's token is its
 * credential there), and the operator's choices for the session.
 */
export function claudeCommand(): string[] {
  return [process.execPath, path.join(projectRoot, 'bin', 'claude-runtime.js')];
}

export function claudeEnv(choice: RuntimeChoice, publicUrl: string): Record<string, string> {
  return {
    DIPPER_MODEL_URL: `${publicUrl}/model`,
    DIPPER_CLAUDE: JSON.stringify({ model: choice.model, allowedTools: choice.allowed_tools }),
  };
}

/** A Claude agent's home holds its session transcripts, which a resumed session reads: one per agent, kept with its runtime folder. */
export function claudeHome(runtimeDir: string): string {
  return path.join(runtimeDir, 'home');
}
