/**
 * Configuration from the environment, validated once at start-up. A bad value stops the process
 * with a message naming the variable, the value and what is allowed.
 */
import type { FunctionOptions } from './types.js';

export interface Config {
  port: number;
  logLevel: string;
  /** Kubeconfig path; empty means in-cluster or the default chain. */
  kubeconfig?: string;
  dryRun: boolean;
  protectedNamespaces: string[];
  maxActionsPerWindow: number;
  windowSeconds: number;
  enabledFunctions: string[];
  bodyLimitBytes: number;
  maxReplans: number;
  kubeRetries: number;
  kubeTimeoutMs: number;
  sweepConcurrency: number;
  /** Per-function option overrides, from OLM_MEDIC_<FUNCTION>_<OPTION> variables. */
  functionOptions: Record<string, FunctionOptions>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env, functions: { name: string; defaults?: FunctionOptions }[]): Config {
  const problems: string[] = [];
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected an integer from ${min} to ${max}`);
      return def;
    }
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const parsed = parseBool(env[name]);
    if (parsed === 'invalid') problems.push(`${name}=${JSON.stringify(env[name])}: expected true or false`);
    return typeof parsed === 'boolean' ? parsed : def;
  };
  const list = (name: string, def: string[]): string[] => {
    const raw = env[name];
    if (raw === undefined) return def;
    return raw.split(',').map((s) => s.trim()).filter(Boolean);
  };

  const names = functions.map((f) => f.name);
  const enabledRaw = list('ENABLED_FUNCTIONS', ['all']);
  if (enabledRaw.length === 0) problems.push(`ENABLED_FUNCTIONS is empty: name functions (${names.join(', ')}) or all`);
  for (const n of enabledRaw) if (n !== 'all' && !names.includes(n)) problems.push(`ENABLED_FUNCTIONS: unknown function "${n}" (known: ${names.join(', ')}, or all)`);
  const enabled = enabledRaw.includes('all') ? names : enabledRaw;

  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL=${JSON.stringify(logLevel)}: expected one of fatal, error, warn, info, debug, trace, silent`);
  }
  // An empty value is a template's unset variable far more often than a wish to protect nothing:
  // refused, and protecting nothing has to be said (`none`) (red team 33, P1).
  const protectedRaw = list('PROTECTED_NAMESPACES', ['kube-system', 'kube-public', 'kube-node-lease']);
  if (protectedRaw.length === 0) problems.push('PROTECTED_NAMESPACES is empty: name the namespaces olm-medic must never write to (default kube-system,kube-public,kube-node-lease), or none to protect no namespace');
  if (protectedRaw.includes('none') && protectedRaw.length > 1) problems.push(`PROTECTED_NAMESPACES=${JSON.stringify(env.PROTECTED_NAMESPACES)}: none stands alone`);
  const protectedNamespaces = protectedRaw.length === 1 && protectedRaw[0] === 'none' ? [] : protectedRaw;
  for (const ns of protectedNamespaces) if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) problems.push(`PROTECTED_NAMESPACES: "${ns}" is not a valid namespace name`);

  const functionOptions: Record<string, FunctionOptions> = {};
  for (const f of functions) functionOptions[f.name] = functionOpts(env, f.name, f.defaults ?? {}, problems);

  const cfg: Config = {
    port: int('PORT', 8080, 1, 65535),
    logLevel,
    ...(env.KUBECONFIG ? { kubeconfig: env.KUBECONFIG.split(':')[0] } : {}),
    dryRun: bool('DRY_RUN', false),
    protectedNamespaces,
    maxActionsPerWindow: int('MAX_ACTIONS_PER_WINDOW', 30, 1, 100_000),
    windowSeconds: int('ACTION_WINDOW_SECONDS', 60, 1, 86_400),
    enabledFunctions: enabled.filter((n) => names.includes(n)),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    maxReplans: int('MAX_REPLANS', 3, 0, 20),
    kubeRetries: int('KUBE_RETRIES', 3, 0, 10),
    kubeTimeoutMs: int('KUBE_TIMEOUT_MS', 10_000, 100, 120_000),
    sweepConcurrency: int('SWEEP_CONCURRENCY', 8, 1, 64),
    functionOptions,
  };
  if (problems.length) throw new ConfigError(problems);
  return cfg;
}

/** OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS overrides catalog-reschedule's fenceMarginSeconds. */
function functionOpts(env: Env, fn: string, defaults: FunctionOptions, problems: string[]): FunctionOptions {
  const out: FunctionOptions = { ...defaults };
  for (const [key, def] of Object.entries(defaults)) {
    const name = `OLM_MEDIC_${fn}_${key.replace(/([A-Z])/g, '_$1')}`.toUpperCase().replace(/-/g, '_');
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    if (typeof def === 'number') {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(n) || n < 0) problems.push(`${name}=${JSON.stringify(raw)}: expected a non-negative number`);
      else out[key] = n;
    } else if (typeof def === 'boolean') {
      const b = parseBool(raw);
      if (typeof b !== 'boolean') problems.push(`${name}=${JSON.stringify(raw)}: expected true or false`);
      else out[key] = b;
    } else out[key] = raw;
  }
  return out;
}

function parseBool(raw: string | undefined): boolean | undefined | 'invalid' {
  if (raw === undefined || raw === '') return undefined;
  const v = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  return 'invalid';
}
