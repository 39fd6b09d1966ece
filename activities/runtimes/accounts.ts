import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RuntimeChoice } from '../../src/config';
import { paths } from '../../src/paths';
import { HostIds, parseRange, type IdRange } from './hostIds';
import { groupId, userId } from './osAccounts';

/** What an agent process runs as: its user, its own group first, then the groups of the folders it may enter. */
export interface ProcessAccount {
  uid: number;
  groups: number[];
  home: string;
}

/** The kernel's overflow user, which Debian's `nobody` is. */
const NOBODY = 65534;

/** A runtime's `user` names no account, or the host cannot run agents as another user. */
export class AccountProblem extends Error {}

/**
 * Folders and accounts for agents that run as another OS user than the
 * worker (a runtime's `user`). Everything stays the worker's (root's);
 * agents get in by group only:
 * - a workspace (the run's, or a team's) has a group of its own, mode 2770
 *   (new files take the folder's group), and a default ACL that keeps what
 *   members write readable and writable by the group;
 * - a team's leader enters through an ACL entry for its own group, since
 *   its process started before the team existed and cannot gain a group;
 * - each agent has its own group for its home folder;
 * - the folders above a workspace or home are 0711: passable, not listable,
 *   so the secrets file, databases, plans and other agents' runtime folders
 *   (all 0600/0700) stay out of reach.
 * Group and user numbers come from HostIds, one per key, kept under the
 * data folder.
 */
export class AgentAccounts {
  private readonly gids: HostIds;

  constructor(
    private readonly dataDir: string,
    groupRange: IdRange,
  ) {
    this.gids = new HostIds(path.join(dataDir, 'host-ids', 'gid'), groupRange);
  }

  /** Gives a workspace its group; `leader` (a team's) may enter it too. */
  shareWorkspace(dir: string, leader?: { runId: string; agentId: string }): void {
    const gid = this.gids.idFor(workspaceKey(this.dataDir, dir));
    this.passable(path.dirname(dir));
    const entries = ['d:u::rwx', 'd:g::rwx', 'd:o::---', 'd:m::rwx'];
    if (leader) {
      const leaderGid = this.gids.idFor(agentKey(leader.runId, leader.agentId));
      entries.push(`g:${leaderGid}:rwx`, `d:g:${leaderGid}:rwx`);
    }
    fs.chownSync(dir, 0, gid);
    fs.chmodSync(dir, 0o2770);
    setfacl(dir, entries);
  }

  /** The account an agent of this runtime runs as, with its home folder made ready. */
  processFor(choice: RuntimeChoice, agent: { runId: string; agentId: string; workspacePath: string }): ProcessAccount {
    const own = this.gids.idFor(agentKey(agent.runId, agent.agentId));
    const workspace = this.gids.idFor(workspaceKey(this.dataDir, agent.workspacePath));
    const groups = [own, workspace];
    if (choice.group !== undefined) {
      const extra = groupId(choice.group);
      if (extra === null) throw new AccountProblem(`the runtime's group "${choice.group}" does not exist on this host`);
      groups.push(extra);
    }
    const home = paths.agentHome(this.dataDir, agent.runId, agent.agentId);
    fs.mkdirSync(home, { recursive: true });
    this.passable(path.dirname(home));
    fs.chownSync(home, 0, own);
    fs.chmodSync(home, 0o2770);
    return { uid: this.uidFor(choice, agent), groups, home };
  }

  /**
   * Who reads a workspace for a person (the files a root's report names):
   * `nobody`, holding the workspace's group alone, so it reads what the
   * workspace's agents share there and nothing of Dipper's or the host's
   * that an agent could not read too.
   */
  readerOf(dir: string): ProcessAccount {
    return { uid: userId('nobody') ?? NOBODY, groups: [this.gids.idFor(workspaceKey(this.dataDir, dir))], home: '/' };
  }

  private uidFor(choice: RuntimeChoice, agent: { runId: string; agentId: string }): number {
    const range = typeof choice.user === 'string' ? parseRange(choice.user) : null;
    if (range) return new HostIds(path.join(this.dataDir, 'host-ids', 'uid'), range).idFor(agentKey(agent.runId, agent.agentId));
    const uid = userId(choice.user!);
    if (uid === null) throw new AccountProblem(`the runtime's user "${choice.user}" does not exist on this host`);
    if (uid === 0) throw new AccountProblem('a runtime user must not be root');
    return uid;
  }

  /** Every folder from the data folder down to `dir`: others may pass through, not list or read. */
  private passable(dir: string): void {
    const rel = path.relative(this.dataDir, dir);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new AccountProblem('a workspace outside the data folder');
    let at = this.dataDir;
    fs.chmodSync(at, 0o711);
    for (const part of rel.split(path.sep).filter(Boolean)) {
      at = path.join(at, part);
      fs.chmodSync(at, 0o711);
    }
  }
}

/** The command line that starts `argv` as the account: no capabilities, and nothing it runs can gain privileges. */
export function runAs(account: ProcessAccount, argv: string[]): string[] {
  return [
    'setpriv',
    `--reuid=${account.uid}`,
    `--regid=${account.groups[0]}`,
    `--groups=${account.groups.join(',')}`,
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
    ...argv,
  ];
}

/**
 * At worker start, when a runtime names a user: the worker must be root
 * (to switch users), and setpriv and setfacl must be installed (util-linux
 * and Debian's `acl`). Said once, plainly, instead of at every launch.
 */
export function checkAccountsSupport(runtimes: RuntimeChoice[], groupRange: string, dataDir: string): IdRange {
  const range = parseRange(groupRange);
  if (!range) throw new AccountProblem(`DIPPER_AGENT_GROUP_IDS must be "first-last" above 0, got "${groupRange}"`);
  if (process.getuid?.() !== 0) throw new AccountProblem('a runtime with `user` needs the worker to run as root, to start agents as that user');
  for (const tool of ['setpriv', 'setfacl']) {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
    } catch {
      throw new AccountProblem(`a runtime with \`user\` needs ${tool} (Debian: ${tool === 'setfacl' ? 'acl' : 'util-linux'})`);
    }
  }
  // Agents reach their folders through the data folder's parents: each must let others pass.
  for (let dir = path.dirname(path.resolve(dataDir)); ; dir = path.dirname(dir)) {
    if (fs.existsSync(dir) && (fs.statSync(dir).mode & 0o001) === 0) {
      throw new AccountProblem(`agents that run as another user cannot pass through ${dir} to the data folder: allow it (chmod o+x) or choose another DIPPER_DATA_DIR`);
    }
    if (dir === path.dirname(dir)) break;
  }
  for (const choice of runtimes.filter((c) => c.user !== undefined)) {
    if (typeof choice.user === 'string' && /^\d+-\d+$/.test(choice.user)) {
      if (!parseRange(choice.user)) throw new AccountProblem(`a runtime's user range "${choice.user}" must be "first-last" above 0`);
    } else if (userId(choice.user!) === null) {
      throw new AccountProblem(`the runtime's user "${choice.user}" does not exist on this host`);
    }
    if (choice.group !== undefined && groupId(choice.group) === null) throw new AccountProblem(`the runtime's group "${choice.group}" does not exist on this host`);
  }
  return range;
}

function setfacl(dir: string, entries: string[]): void {
  execFileSync('setfacl', ['-m', entries.join(','), dir], { stdio: ['ignore', 'ignore', 'pipe'] });
}

const agentKey = (runId: string, agentId: string) => `agent:${runId}/${agentId}`;
const workspaceKey = (dataDir: string, dir: string) => `workspace:${path.relative(dataDir, dir)}`;
