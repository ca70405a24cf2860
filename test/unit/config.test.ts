import { describe, it, expect } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../shared/core/config.js';
import type { FunctionOptions } from '../../shared/core/types.js';

const FUNCTIONS: { name: string; defaults?: FunctionOptions }[] = [
  { name: 'catalog-reschedule', defaults: { fenceMarginSeconds: 30, enabled: true, mode: 'safe' } },
  { name: 'job-conflict' },
];

function configError(env: Record<string, string | undefined>, functions = FUNCTIONS): ConfigError {
  try {
    loadConfig(env, functions);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig: defaults', () => {
  it('an empty environment gives the documented defaults', () => {
    const cfg = loadConfig({}, FUNCTIONS);
    expect(cfg).toEqual<Config>({
      port: 8080,
      logLevel: 'info',
      dryRun: false,
      protectedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease'],
      maxActionsPerWindow: 30,
      windowSeconds: 60,
      enabledFunctions: ['catalog-reschedule', 'job-conflict'],
      bodyLimitBytes: 1_048_576,
      maxReplans: 3,
      kubeRetries: 3,
      kubeTimeoutMs: 10_000,
      sweepConcurrency: 8,
      functionOptions: {
        'catalog-reschedule': { fenceMarginSeconds: 30, enabled: true, mode: 'safe' },
        'job-conflict': {},
      },
    });
    expect('kubeconfig' in cfg).toBe(false);
  });

  it('empty strings for numeric and boolean variables mean "use the default"', () => {
    const cfg = loadConfig({ PORT: '', DRY_RUN: '', MAX_REPLANS: '' }, FUNCTIONS);
    expect(cfg.port).toBe(8080);
    expect(cfg.dryRun).toBe(false);
    expect(cfg.maxReplans).toBe(3);
  });

  it('does not mutate the function defaults it was given', () => {
    const fns = [{ name: 'catalog-reschedule', defaults: { fenceMarginSeconds: 30 } }];
    const cfg = loadConfig({ OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: '5' }, fns);
    expect(cfg.functionOptions['catalog-reschedule']).toEqual({ fenceMarginSeconds: 5 });
    expect(fns[0]!.defaults).toEqual({ fenceMarginSeconds: 30 });
  });
});

describe('loadConfig: good values', () => {
  it('reads every variable', () => {
    const cfg = loadConfig(
      {
        PORT: '9090',
        LOG_LEVEL: 'debug',
        KUBECONFIG: '/home/me/.kube/config:/etc/other',
        DRY_RUN: 'TRUE',
        PROTECTED_NAMESPACES: ' kube-system , openshift-operators ,',
        MAX_ACTIONS_PER_WINDOW: '5',
        ACTION_WINDOW_SECONDS: '120',
        ENABLED_FUNCTIONS: 'job-conflict',
        BODY_LIMIT_BYTES: '2048',
        MAX_REPLANS: '0',
        KUBE_RETRIES: '10',
        KUBE_TIMEOUT_MS: '100',
        SWEEP_CONCURRENCY: '64',
      },
      FUNCTIONS,
    );
    expect(cfg).toMatchObject({
      port: 9090,
      logLevel: 'debug',
      // only the first kubeconfig of a KUBECONFIG list
      kubeconfig: '/home/me/.kube/config',
      dryRun: true,
      protectedNamespaces: ['kube-system', 'openshift-operators'],
      maxActionsPerWindow: 5,
      windowSeconds: 120,
      enabledFunctions: ['job-conflict'],
      bodyLimitBytes: 2048,
      maxReplans: 0,
      kubeRetries: 10,
      kubeTimeoutMs: 100,
      sweepConcurrency: 64,
    });
  });

  it.each([
    ['true', true],
    ['1', true],
    ['yes', true],
    ['Yes', true],
    ['false', false],
    ['0', false],
    ['NO', false],
  ])('DRY_RUN=%s → %s', (raw, want) => {
    expect(loadConfig({ DRY_RUN: raw }, FUNCTIONS).dryRun).toBe(want);
  });

  it('ENABLED_FUNCTIONS=all enables every function', () => {
    expect(loadConfig({ ENABLED_FUNCTIONS: 'all' }, FUNCTIONS).enabledFunctions).toEqual(['catalog-reschedule', 'job-conflict']);
  });

  it('PROTECTED_NAMESPACES="" is a ConfigError (an unset template variable must not lift the protection); none means no protected namespaces', () => {
    expect(() => loadConfig({ PROTECTED_NAMESPACES: '' }, FUNCTIONS)).toThrow(/PROTECTED_NAMESPACES is empty/);
    expect(loadConfig({ PROTECTED_NAMESPACES: 'none' }, FUNCTIONS).protectedNamespaces).toEqual([]);
  });

  it.each([
    ['PORT', '1', 'port', 1],
    ['PORT', '65535', 'port', 65535],
    ['BODY_LIMIT_BYTES', '1024', 'bodyLimitBytes', 1024],
    ['BODY_LIMIT_BYTES', String(64 * 1_048_576), 'bodyLimitBytes', 64 * 1_048_576],
    ['ACTION_WINDOW_SECONDS', '86400', 'windowSeconds', 86_400],
    ['MAX_ACTIONS_PER_WINDOW', '100000', 'maxActionsPerWindow', 100_000],
    ['KUBE_TIMEOUT_MS', '120000', 'kubeTimeoutMs', 120_000],
    ['MAX_REPLANS', '20', 'maxReplans', 20],
    ['KUBE_RETRIES', '0', 'kubeRetries', 0],
    ['SWEEP_CONCURRENCY', '1', 'sweepConcurrency', 1],
  ] as const)('%s=%s is the inclusive bound', (name, raw, key, want) => {
    expect(loadConfig({ [name]: raw }, FUNCTIONS)[key]).toBe(want);
  });
});

describe('loadConfig: bad values', () => {
  it.each([
    ['PORT', '0'],
    ['PORT', '65536'],
    ['PORT', 'http'],
    ['PORT', '80.5'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'INFO'],
    ['DRY_RUN', 'maybe'],
    ['PROTECTED_NAMESPACES', 'kube-system,Bad_NS'],
    ['PROTECTED_NAMESPACES', '-leading-dash'],
    ['MAX_ACTIONS_PER_WINDOW', '0'],
    ['MAX_ACTIONS_PER_WINDOW', '100001'],
    ['ACTION_WINDOW_SECONDS', '0'],
    ['ACTION_WINDOW_SECONDS', '86401'],
    ['ENABLED_FUNCTIONS', 'job-conflict,nope'],
    ['BODY_LIMIT_BYTES', '1023'],
    ['BODY_LIMIT_BYTES', String(64 * 1_048_576 + 1)],
    ['MAX_REPLANS', '-1'],
    ['MAX_REPLANS', '21'],
    ['KUBE_RETRIES', '11'],
    ['KUBE_TIMEOUT_MS', '99'],
    ['KUBE_TIMEOUT_MS', '120001'],
    ['SWEEP_CONCURRENCY', '0'],
    ['SWEEP_CONCURRENCY', '65'],
  ])('%s=%s is a ConfigError naming the variable', (name, raw) => {
    const err = configError({ [name]: raw });
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toContain(name);
    expect(err.message).toContain(name);
    expect(err.name).toBe('ConfigError');
  });

  it('integer problems name the value and the allowed range', () => {
    const err = configError({ PORT: 'http' });
    expect(err.problems[0]).toBe('PORT="http": expected an integer from 1 to 65535');
  });

  it('boolean problems name the value', () => {
    expect(configError({ DRY_RUN: 'maybe' }).problems[0]).toBe('DRY_RUN="maybe": expected true or false');
  });

  it('ENABLED_FUNCTIONS with an unknown name lists the known names', () => {
    const err = configError({ ENABLED_FUNCTIONS: 'catalog-reschedule, typo-fn' });
    expect(err.problems).toEqual(['ENABLED_FUNCTIONS: unknown function "typo-fn" (known: catalog-reschedule, job-conflict, or all)']);
  });

  it('several problems are reported together, each naming its variable', () => {
    const err = configError({
      PORT: 'x',
      LOG_LEVEL: 'loud',
      DRY_RUN: 'perhaps',
      SWEEP_CONCURRENCY: '1000',
      ENABLED_FUNCTIONS: 'ghost',
      OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: '-3',
    });
    expect(err.problems).toHaveLength(6);
    for (const v of ['PORT', 'LOG_LEVEL', 'DRY_RUN', 'SWEEP_CONCURRENCY', 'ENABLED_FUNCTIONS', 'OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS']) {
      expect(err.problems.some((p) => p.includes(v))).toBe(true);
      expect(err.message).toContain(v);
    }
  });
});

describe('loadConfig: per-function options', () => {
  const fns = [{ name: 'catalog-reschedule', defaults: { fenceMarginSeconds: 30, enabled: true } }];

  it('OLM_MEDIC_<FN>_<OPTION> overrides a number option', () => {
    const cfg = loadConfig({ OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: '45' }, fns);
    expect(cfg.functionOptions['catalog-reschedule']).toEqual({ fenceMarginSeconds: 45, enabled: true });
  });

  it('overrides a boolean option', () => {
    const cfg = loadConfig({ OLM_MEDIC_CATALOG_RESCHEDULE_ENABLED: 'false' }, fns);
    expect(cfg.functionOptions['catalog-reschedule']).toEqual({ fenceMarginSeconds: 30, enabled: false });
  });

  it('overrides a string option verbatim', () => {
    const cfg = loadConfig({ OLM_MEDIC_CATALOG_RESCHEDULE_MODE: 'aggressive' }, FUNCTIONS);
    expect(cfg.functionOptions['catalog-reschedule']?.mode).toBe('aggressive');
  });

  it('an empty override keeps the default', () => {
    const cfg = loadConfig({ OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: '' }, fns);
    expect(cfg.functionOptions['catalog-reschedule']?.fenceMarginSeconds).toBe(30);
  });

  it('the camelCase option name is not the variable name', () => {
    const cfg = loadConfig({ OLM_MEDIC_CATALOG_RESCHEDULE_FENCEMARGINSECONDS: '1', OLM_MEDIC_CATALOG_RESCHEDULE_fenceMarginSeconds: '2' }, fns);
    expect(cfg.functionOptions['catalog-reschedule']?.fenceMarginSeconds).toBe(30);
  });

  it.each([
    ['-1', 'a non-negative number'],
    ['soon', 'a non-negative number'],
    ['Infinity', 'a non-negative number'],
  ])('number option =%s is a ConfigError naming the variable', (raw, expected) => {
    const err = configError({ OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: raw }, fns);
    expect(err.problems).toEqual([`OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS=${JSON.stringify(raw)}: expected ${expected}`]);
  });

  it('boolean option with a non-boolean is a ConfigError naming the variable', () => {
    const err = configError({ OLM_MEDIC_CATALOG_RESCHEDULE_ENABLED: 'on' }, fns);
    expect(err.problems).toEqual(['OLM_MEDIC_CATALOG_RESCHEDULE_ENABLED="on": expected true or false']);
  });

  it('options of one function do not leak into another', () => {
    const two = [
      { name: 'a-fn', defaults: { limit: 1 } },
      { name: 'b-fn', defaults: { limit: 2 } },
    ];
    const cfg = loadConfig({ OLM_MEDIC_A_FN_LIMIT: '10' }, two);
    expect(cfg.functionOptions).toEqual({ 'a-fn': { limit: 10 }, 'b-fn': { limit: 2 } });
  });

  it('disabled functions still get their options resolved', () => {
    const cfg = loadConfig({ ENABLED_FUNCTIONS: 'job-conflict', OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: '7' }, FUNCTIONS);
    expect(cfg.enabledFunctions).toEqual(['job-conflict']);
    expect(cfg.functionOptions['catalog-reschedule']?.fenceMarginSeconds).toBe(7);
  });
});
