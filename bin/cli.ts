/**
 * Composition root of the CLI (bin/olm-medic.mjs runs its bundle, dist/cli.mjs): joins the CLI
 * library (shared/cli) with the remediation functions.
 */
import { runCli as run, type CliIo } from '../shared/cli/run.js';
import { allFunctions } from '../functions/index.js';

export { EXIT } from '../shared/cli/run.js';

export function runCli(argv: string[], io: CliIo): Promise<number> {
  return run(argv, io, allFunctions);
}
