/**
 * Red team 33, P1 (fixed: shared/core/config.ts refuses an empty list; `none` protects nothing): PROTECTED_NAMESPACES set but EMPTY (`PROTECTED_NAMESPACES=$PROTECTED` with the
 * variable unset, a Helm/Kustomize value left blank, or `PROTECTED_NAMESPACES=,`) silently turns the
 * namespace protection OFF: shared/core/config.ts `list()` returns [] for "" (only `undefined` gets
 * the default kube-system,kube-public,kube-node-lease), and nothing reports it. The same empty value is
 * a start-up error for ENABLED_FUNCTIONS ("ENABLED_FUNCTIONS is empty") and for `sweep --namespace ""`
 * ("an unset $NS must not widen the sweep"), and an empty number (MAX_ACTIONS_PER_WINDOW="") means its
 * default — only the safety list turns into "nothing is protected".
 *
 * Shown end to end through the CLI: `olm-medic sweep --function ownerref-repair` with
 * PROTECTED_NAMESPACES="" patches an InstallPlan in kube-system (with the variable unset the same
 * sweep is refused with a ProtectedNamespace Warning and writes nothing).
 * SAFE: an empty value is refused at start-up (exit 2) or means the default; either way no write in
 * kube-system.
 */
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../shared/cli/run.js';
import { loadConfig } from '../../shared/core/config.js';
import type { AnyFunction } from '../../shared/core/types.js';
import type { Kube, KubeObject, ListOptions, Ref } from '../../shared/kube/types.js';
import { allFunctions } from '../../functions/index.js';
import { unreachableCluster } from '../support/cli.js';

const V1A = 'operators.coreos.com/v1alpha1';
const NS = 'kube-system';

const fake = vi.hoisted(() => ({ kube: undefined as unknown }));
vi.mock('../../shared/wiring.js', async (orig) => {
  const real = (await orig()) as typeof import('../../shared/wiring.js');
  return {
    ...real,
    createRuntime: (config: never, functions: AnyFunction[], o: Record<string, unknown>) => real.createRuntime(config, functions, { ...o, kube: fake.kube as never }),
  };
});

/** A cluster holding one Subscription in kube-system whose InstallPlan misses its ownerReference. */
function cluster() {
  const writes: string[] = [];
  const objs: KubeObject[] = [
    {
      apiVersion: V1A,
      kind: 'Subscription',
      metadata: { name: 'sub', namespace: NS, uid: 'sub-uid', resourceVersion: '5' },
      spec: { name: 'pkg' },
      status: { currentCSV: 'pkg.v1', installPlanRef: { apiVersion: V1A, kind: 'InstallPlan', name: 'install-abcde', namespace: NS, uid: 'ip-uid' } },
    },
    {
      apiVersion: V1A,
      kind: 'InstallPlan',
      metadata: { name: 'install-abcde', namespace: NS, uid: 'ip-uid', resourceVersion: '10', creationTimestamp: '2025-01-01T00:00:00Z', labels: { [`operators.coreos.com/pkg.${NS}`]: '' } },
      spec: { clusterServiceVersionNames: ['pkg.v1'] },
    },
  ];
  const kube: Kube = {
    async get<T extends KubeObject>(ref: Ref) {
      const o = objs.find((x) => x.kind === ref.kind && x.metadata.namespace === ref.namespace && x.metadata.name === ref.name);
      return o ? (structuredClone(o) as T) : undefined;
    },
    list<T extends KubeObject>(_a: string, kind: string, opts: ListOptions = {}) {
      opts.onListResourceVersion?.('20');
      const items = objs.filter((o) => o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace));
      return (async function* () {
        for (const o of items) yield structuredClone(o) as T;
      })();
    },
    async mergePatch(ref: Ref) {
      writes.push(`patch ${ref.kind}/${ref.namespace}/${ref.name}`);
      return {} as KubeObject;
    },
    async delete(ref: Ref) {
      writes.push(`delete ${ref.kind}/${ref.namespace}/${ref.name}`);
      return 'deleted' as const;
    },
    async create(o: KubeObject) {
      return o; // Events
    },
    serverNow: () => new Date('2026-01-01T00:00:00Z'),
  };
  return { kube, writes };
}

const { kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-rt33-prot-');

async function sweep(env: Record<string, string>) {
  const c = cluster();
  fake.kube = c.kube;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['sweep', '--function', 'ownerref-repair', '--wait', '0', '-o', 'json'], { out: (s) => out.push(s), err: (s) => err.push(s), env: { KUBECONFIG, ...env } }, allFunctions);
  return { code, writes: c.writes, err: err.join('') };
}

describe('an empty PROTECTED_NAMESPACES never turns namespace protection off (red team 33 P1)', () => {
  it('control: with PROTECTED_NAMESPACES unset, the kube-system InstallPlan is not patched', async () => {
    const r = await sweep({});
    expect(r.writes).toEqual([]);
  }, 30_000);

  it('PROTECTED_NAMESPACES="" (an unset variable in a template): no write in kube-system (refused at start, or the default list)', async () => {
    const r = await sweep({ PROTECTED_NAMESPACES: '' });
    // Current code: exit 3 and writes = ['patch InstallPlan/kube-system/install-abcde'].
    expect(r.writes).toEqual([]);
  }, 30_000);

  it('loadConfig: PROTECTED_NAMESPACES="" or "," never yields an empty protected list silently', () => {
    for (const v of ['', ',', ' ']) {
      let protectedNs: string[] | 'refused';
      try {
        protectedNs = loadConfig({ PROTECTED_NAMESPACES: v }, allFunctions).protectedNamespaces;
      } catch {
        protectedNs = 'refused';
      }
      // Current code: [] for each.
      expect(protectedNs === 'refused' || protectedNs.includes('kube-system'), `PROTECTED_NAMESPACES=${JSON.stringify(v)} gave ${JSON.stringify(protectedNs)}`).toBe(true);
    }
  });

  it('the CLI refuses an empty value at start-up with exit 2, naming the variable', async () => {
    const r = await sweep({ PROTECTED_NAMESPACES: ',' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/PROTECTED_NAMESPACES is empty/);
    expect(r.writes).toEqual([]);
  }, 30_000);

  it('none protects no namespace (said explicitly); none beside a name is refused', () => {
    expect(loadConfig({ PROTECTED_NAMESPACES: 'none' }, allFunctions).protectedNamespaces).toEqual([]);
    expect(() => loadConfig({ PROTECTED_NAMESPACES: 'none,kube-system' }, allFunctions)).toThrow(/none stands alone/);
  });

  it('with none, the kube-system InstallPlan is patched (the twin: protection really is off then)', async () => {
    const r = await sweep({ PROTECTED_NAMESPACES: 'none' });
    expect(r.writes).toEqual(['patch InstallPlan/kube-system/install-abcde']);
  }, 30_000);
});
