/**
 * Children that die with the process that spawned them. Exit hooks stop children on a normal exit,
 * SIGINT and SIGTERM, but not when the runner is SIGKILLed (an outer timeout, `kill -9`): then a
 * server that logs to a file, etcd and kube-controller-manager lived on, re-parented to init, and
 * an orphaned olm-medic server idled through the next benchmark run. On Linux, util-linux's
 * `setpriv --pdeathsig KILL` sets the child's parent-death signal and execs the command in place
 * (same pid, nothing left in between); where setpriv is missing the command runs as it is.
 */
import { existsSync } from 'node:fs';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => process.platform === 'linux' && existsSync(p));

/** [command, args] to hand to spawn(): `bin args` under a KILL parent-death signal when possible. */
export function dieWithParent(bin: string, args: readonly string[]): [string, string[]] {
  return SETPRIV && process.env.OLM_MEDIC_NO_PDEATHSIG !== '1' ? [SETPRIV, ['--pdeathsig', 'KILL', '--', bin, ...args]] : [bin, [...args]];
}
