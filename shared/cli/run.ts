/**
 * olm-medic CLI, for clusters not on Knative yet (uses the current kubeconfig):
 *   olm-medic sweep  [--dry-run] [--function NAME]... [--namespace NS] [--wait SECONDS] [-o table|json]
 *   olm-medic replay FILE.jsonl [--dry-run] [--function NAME]... [--wait SECONDS] [-o table|json]
 * A run finishes what it starts: targets that asked to be looked at again (waiting for garbage
 * collection, a fence, OLM's own retry) are re-checked when due, for up to --wait seconds (default
 * 120; 0: not at all); each row is one target, folded from every look at it.
 * A replay reads each line on its own: a line that is not a valid event is named on stderr (and in
 * the JSON's `rejected`), the other events are handled, and the exit code is 1.
 * Exit codes: 0 clean (nothing to do), 3 acted (or would have, in dry-run) and finished, 4 still in
 * progress when --wait ran out (re-run later), 1 failed (or a replayed line rejected), 2 usage.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ConfigError, loadConfig } from '../core/config.js';
import { asksRecheck } from '../core/engine.js';
import type { Outcome } from '../core/outcome.js';
import type { AnyFunction } from '../core/types.js';
import { decodeRequest } from '../events/decode.js';
import { jsonlLines } from '../events/jsonl.js';
import { BadRequest } from '../events/types.js';
import { namespaceProblem } from '../kube/validate.js';
import { createRuntime } from '../wiring.js';

export const EXIT = { clean: 0, failed: 1, usage: 2, acted: 3, inProgress: 4 } as const;

const DEFAULT_WAIT_SECONDS = 120;

/** A replayed line is what a Broker sends in structured mode. */
const STRUCTURED = { 'content-type': 'application/cloudevents+json' };

const USAGE = `usage: olm-medic sweep  [--dry-run] [--function NAME]... [--namespace NS] [--wait SECONDS] [-o table|json]
       olm-medic replay FILE.jsonl [--dry-run] [--function NAME]... [--wait SECONDS] [-o table|json]`;

export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  env: Record<string, string | undefined>;
}

export async function runCli(argv: string[], io: CliIo, allFunctions: AnyFunction[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'dry-run': { type: 'boolean' },
        function: { type: 'string', multiple: true },
        namespace: { type: 'string' },
        wait: { type: 'string' },
        output: { type: 'string', short: 'o', default: 'table' },
        help: { type: 'boolean', short: 'h' },
      },
      tokens: true,
    });
  } catch (e) {
    io.err(`${e instanceof Error ? e.message : e}\n${USAGE}`);
    return EXIT.usage;
  }
  // A flag that takes one value, given twice (`--namespace a --namespace b`): refused, not the last.
  const given = new Map<string, number>();
  for (const t of args.tokens ?? []) if (t.kind === 'option') given.set(t.name, (given.get(t.name) ?? 0) + 1);
  const twice = ['namespace', 'wait', 'output'].filter((n) => (given.get(n) ?? 0) > 1);
  if (twice.length) {
    io.err(`${twice.map((n) => `--${n}`).join(', ')} given more than once: each takes one value\n${USAGE}`);
    return EXIT.usage;
  }
  const [cmd, file] = args.positionals;
  if (args.values.help) return io.out(USAGE), EXIT.clean;
  if ((cmd !== 'sweep' && cmd !== 'replay') || (cmd === 'replay' && !file) || !['table', 'json'].includes(args.values.output!)) {
    io.err(USAGE);
    return EXIT.usage;
  }
  // Every argument means something: an extra file (a shell glob over dead letters) or a filter the
  // command does not take is refused, never silently dropped.
  const extra = args.positionals.slice(cmd === 'replay' ? 2 : 1);
  if (extra.length) {
    io.err(`unexpected argument(s) ${extra.map((a) => JSON.stringify(a)).join(' ')}: ${cmd} takes ${cmd === 'replay' ? 'one file (join several with cat)' : 'no file'}\n${USAGE}`);
    return EXIT.usage;
  }
  const ns = args.values.namespace;
  if (ns !== undefined && cmd === 'replay') {
    io.err(`--namespace is for sweep: a replay looks at what its events name\n${USAGE}`);
    return EXIT.usage;
  }
  // An empty value ("--namespace $NS" with NS unset) must not widen the sweep to the whole cluster.
  const nsProblem = ns === '' ? 'must not be empty (leave the flag out to sweep every namespace)' : namespaceProblem(ns);
  if (nsProblem) {
    io.err(`--namespace ${JSON.stringify(ns)} ${nsProblem}\n${USAGE}`);
    return EXIT.usage;
  }
  const wait = args.values.wait === undefined ? DEFAULT_WAIT_SECONDS : Number(args.values.wait);
  if (!/^\d+$/.test(args.values.wait ?? '0') || !Number.isSafeInteger(wait)) {
    io.err(`--wait must be a whole number of seconds, not ${JSON.stringify(args.values.wait)}\n${USAGE}`);
    return EXIT.usage;
  }
  const env = {
    LOG_LEVEL: 'silent',
    ...io.env,
    ...(args.values['dry-run'] ? { DRY_RUN: 'true' } : {}),
    ...(args.values.function ? { ENABLED_FUNCTIONS: args.values.function.join(',') } : {}),
  };
  let rt;
  try {
    const config = loadConfig(env, allFunctions);
    // --function is this run's scope: those functions run (enabled even if ENABLED_FUNCTIONS leaves
    // them out) and nothing else, not even a left-out function's whenDisabled variant. The CLI's
    // dry-run writes nothing at all.
    rt = createRuntime(config, allFunctions, {
      log: pino({ level: config.logLevel }, pino.destination(2)),
      // (as ENABLED_FUNCTIONS parses it: "a,b", "all", a trailing comma)
      ...(args.values.function ? { only: config.enabledFunctions } : {}),
      strictDryRun: true,
      oneShot: true,
    });
  } catch (e) {
    io.err(e instanceof ConfigError ? e.message : `cannot start: ${e instanceof Error ? e.message : e}`);
    return EXIT.usage;
  }
  let outcomes: Outcome[] = [];
  let pending: string[] = [];
  const rejected: { at: string; error: string }[] = [];
  try {
    // Every look at a target counts (first passes, follow-ups, re-checks, also one that finishes
    // before the drain below starts): a target's row is folded from all of them.
    if (!rt.config.dryRun) rt.engine.trackLooks();
    if (cmd === 'sweep') {
      append(outcomes, await rt.engine.handle({ kind: 'sweep', ...(ns ? { namespace: ns } : {}), meta: { id: 'cli', source: 'olm-medic-cli', type: 'io.olm-medic.sweep' } }));
    } else {
      // Each line on its own, decoded as the HTTP door decodes a structured-mode request (the same
      // checks, the same 400s): a line that is not a valid event (a dead letter a Broker got a 400
      // for) is reported, and the replay goes on with the rest; so it does past a line whose
      // handling failed unexpectedly (a failed outcome, as the door's 500).
      for (const { at, text, bytes } of jsonlLines(readFileSync(file!), file)) {
        let trigger;
        try {
          // The door's body limit too, on the line's bytes as the door counts them: a line it would
          // answer 413 is not replayed either.
          if (bytes > rt.config.bodyLimitBytes) throw new BadRequest(413, `body exceeds the limit of ${rt.config.bodyLimitBytes} bytes (BODY_LIMIT_BYTES)`);
          trigger = decodeRequest(STRUCTURED, text);
        } catch (e) {
          rejected.push({ at, error: e instanceof BadRequest ? e.message : `invalid CloudEvent: ${e instanceof Error ? e.message : e}` });
          continue;
        }
        try {
          append(outcomes, await rt.engine.handle(trigger));
        } catch (e) {
          if (e instanceof BadRequest) rejected.push({ at, error: e.message });
          else outcomes.push({ target: at, status: 'failed', reason: `handling failed: ${e instanceof Error ? e.message : e}` });
        }
      }
    }
    // Finish what the run started: follow the re-checks it scheduled (a dry run starts nothing).
    if (!rt.config.dryRun) {
      const followed = await rt.engine.drain(Date.now() + wait * 1000);
      // A target is in progress while its re-check is scheduled or running, and when its last look
      // asked for a re-check that never ran (the engine's queue is bounded): a re-check that ran
      // would be a later look. Never reported as finished.
      const unfinished = [...followed.looks].filter(([, h]) => asksRecheck(h[h.length - 1]!)).map(([k]) => k);
      pending = [...new Set([...followed.pending, ...unfinished])];
      // One row per target looked at, folded from all its looks; then what was not a look (events
      // no function wanted, a sweep's listing failure, a line whose handling failed).
      outcomes = [...[...followed.looks.values()].map(fold), ...outcomes.filter((o) => !followed.looks.has(targetKey(o)))];
    }
  } catch (e) {
    io.err(`${cmd} failed: ${e instanceof Error ? e.message : e}`);
    return EXIT.failed;
  } finally {
    rt.engine.close();
  }
  const shown = outcomes.filter((o) => o.status !== 'noop' && o.status !== 'ignored' && o.status !== 'gone');
  if (args.values.output === 'json') io.out(JSON.stringify({ dryRun: rt.config.dryRun, outcomes: shown, total: outcomes.length, inProgress: pending, ...(cmd === 'replay' ? { rejected } : {}) }, null, 2));
  else io.out(table(shown, outcomes.length, rt.config.dryRun, pending, wait));
  for (const r of rejected) io.err(`rejected ${r.at}: ${r.error}`);
  if (rejected.length || outcomes.some((o) => o.status === 'failed' || o.status === 'transient')) return EXIT.failed;
  if (pending.length) return EXIT.inProgress;
  if (outcomes.some((o) => ['acted', 'dry-run', 'refused', 'deferred', 'requeued', 'rate-limited'].includes(o.status))) return EXIT.acted;
  return EXIT.clean;
}

/**
 * One target's row from all its looks in the run, in order. The last look is its latest word (a
 * failure a later look got past is not reported), but nothing a look did is dropped: the row lists
 * every write of every look, and a target whose last look found nothing left to do after a write
 * reports "acted" (with why it ended). A write followed by a failure, a refusal or a wait reports
 * that status, with the writes.
 */
function fold(looks: Outcome[]): Outcome {
  const last = looks[looks.length - 1]!;
  if (looks.length === 1) return last;
  // Every write of every look (a look lists a write once, however often it re-planned; the same
  // write in two looks was made twice, e.g. of an object recreated under the same name).
  const actions = looks.flatMap((o) => o.actions ?? []);
  const acting = looks.findLast((o) => o.status === 'acted' || (o.actions ?? []).some((a) => a.result === 'done'));
  if (acting && (last.status === 'noop' || last.status === 'gone')) {
    const { requeueAfterSeconds: _r, ...rest } = acting;
    return { ...rest, status: 'acted', reason: `${acting.reason}; then ${last.status}: ${last.reason}`, actions };
  }
  return { ...last, ...(actions.length ? { actions } : {}) };
}

function table(rows: Outcome[], total: number, dryRun: boolean, pending: string[], wait: number): string {
  const head = ['FUNCTION', 'TARGET', 'RESULT', 'ACTIONS', 'REASON'];
  const body = rows.map((o) => [
    o.function ?? '-',
    o.target ?? '-',
    o.status,
    (o.actions ?? []).map((a) => `${a.verb} ${a.target}`).join(', ') || '-',
    o.reason.length > 100 ? `${o.reason.slice(0, 97)}...` : o.reason,
  ]);
  // Loops, not spread arguments: a sweep of a few hundred thousand rows must not overflow the stack.
  const widths = head.map((h, i) => body.reduce((w, r) => Math.max(w, r[i]!.length), h.length));
  const fmt = (r: string[]): string => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const summary = `${total} checked, ${rows.length} finding(s)${dryRun ? ' (dry-run: nothing was changed)' : ''}`;
  const progress = pending.length ? [`still in progress after ${wait} s (run again later): ${pending.join(', ')}`] : [];
  return rows.length ? [fmt(head), ...body.map(fmt), '', summary, ...progress].join('\n') : [`clean: ${summary}`, ...progress].join('\n');
}

/** An outcome's target as the engine keys its re-checks (`function|Kind/ns/name`, then `@scope` for a scoped look). */
function targetKey(o: Outcome): string {
  return `${o.function ?? ''}|${o.target ?? ''}${o.scope ? `@${o.scope}` : ''}`;
}

/**
 * Appends outcomes in a loop (`push(...items)` overflows the stack past ~150,000 items), each
 * followed by the immediate looks at what it left held, as rows of their own targets (a dry run's
 * rows; a tracked run folds every look instead).
 */
function append(to: Outcome[], items: Outcome[]): void {
  for (const { followUps, ...item } of items) {
    to.push(item);
    for (const f of followUps ?? []) to.push(f);
  }
}
