/**
 * Red team 52 (fixed): a write the apiserver refused for ONE Operator's uninstall is taken as refused for
 * ANOTHER Operator's different write to the same object. A CRD carries two component keys (two
 * operators share it). Operator A's unlabel (removing A's key) is refused by an admission policy
 * that protects A's key. Operator B's unlabel removes B's key — another write, which the apiserver
 * accepts — but RefusedWrites is keyed by (reason, uid, resourceVersion) only, so planOperator
 * keeps B's label as "refused by the apiserver" (refusedNow) and the executor drops the write as a
 * known refusal: B's patch is never sent, and no Event regarding Operator B says why.
 * README: refused writes are remembered "by the write and the object's uid and resourceVersion";
 * "every action and every refusal records a Kubernetes Event". Now a write is remembered by
 * writeKey (its reason, and a patch's content): B's unlabel is its own write and is sent.
 */
import { describe, expect, it } from 'vitest';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { componentsSelecting, iso, KEY, NOW } from '../support/auto-uninstall-scene.js';
import { recordingKube, refUpdate, withRuntime } from '../support/fake-runtime.js';

const KEY_B = 'operators.coreos.com/redis.ns-b';
const crd: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'shared.example.com', uid: 'crd-1', resourceVersion: '31', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '', [KEY_B]: '' } }, spec: {} };

function requested(name: string, uid: string, key: string): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: { name, uid, resourceVersion: '60', creationTimestamp: iso(86400 * 60), annotations: { [MEDIC.uninstall]: 'true' } },
    spec: {},
    status: { components: componentsSelecting(key, [crd]) },
  };
}
const opA = requested('etcd.ns-a', 'op-a', KEY);
const opB = requested('redis.ns-b', 'op-b', KEY_B);

async function run(looks: string[]): Promise<{ writes: string[]; eventsAboutB: string[] }> {
  const eventsAboutB: string[] = [];
  const { kube, writes } = recordingKube([crd, opA, opB], {
    now: () => NOW,
    patchBody: true,
    create: async (o) => {
      const e = o as unknown as { reason?: string; regarding?: { name?: string } };
      if (o.kind === 'Event' && e.regarding?.name === 'redis.ns-b') eventsAboutB.push(String(e.reason));
      return o;
    },
    mergePatch: async (_ref, patch) => {
      const labels = (patch as { metadata?: { labels?: Record<string, unknown> } }).metadata?.labels ?? {};
      // An admission policy that protects etcd's key (and only it).
      if (KEY in labels) throw new KubeError(403, 'Forbidden', `admission webhook "label-guard" denied the request: label ${KEY} is protected`);
      return {} as KubeObject;
    },
  });
  await withRuntime(kube, { now: () => NOW }, async (rt) => {
    for (const [i, name] of looks.entries()) await rt.engine.handle(refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name }, `e${i}`));
  });
  return { writes, eventsAboutB };
}

const unlabelB = `patch CustomResourceDefinition /shared.example.com {"metadata":{"labels":{"${KEY_B}":null},"resourceVersion":"31"}}`;

describe('red team 52: a refusal of one Operator\'s unlabel is applied to another Operator\'s unlabel', () => {
  it('A refused first, then B: B\'s own unlabel (another write) is sent, or at least B\'s refusal has an Event', async () => {
    const r = await run(['etcd.ns-a', 'redis.ns-b']);
    expect(r.writes.some((w) => w.includes(`"${KEY}":null`))).toBe(true); // A's unlabel was sent and refused
    expect(r.writes.includes(unlabelB) || r.eventsAboutB.length > 0).toBe(true);
    expect(r.writes).toContain(unlabelB);
  });

  it('twin: B alone: its unlabel is sent (the apiserver accepts it)', async () => {
    const r = await run(['redis.ns-b']);
    expect(r.writes).toContain(unlabelB);
  });
});
