/**
 * A recorded automatic uninstall removes only what the CSVs it was decided on account for
 * (olm-medic.io/uninstall-csvs); a record without them is taken back; and the start refuses while a
 * part under the key is OLM-marked as another, gone CSV's.
 *
 * The holes, all under a component label key two installs share (names truncated to the same 63
 * characters, olm-facts §2.2), all with autoUninstall on:
 * - Legacy record (left open in stop 28, after red team 42): a recorded uninstall cannot re-check C1
 *   (every namespace holding a part under the key holds a long-Failed CSV): its own first stage
 *   deletes that evidence. A record from an olm-medic before C1 — a legacy own `true` (<= b8082f5)
 *   or an `auto` of 8f97ca8 — deleted the other install's ServiceAccount, Role, ConfigMap and idle
 *   Deployment once A's CSV was gone (red team 42's fix only kept a SERVING Deployment).
 * - Red team 44, H3: two installs in ONE namespace (…-fleet-east and …-fleet-west in `operators`).
 *   B's CSV was deleted with --cascade=orphan; its parts carry `olm.owner=<B's CSV>`. C1 counts
 *   namespaces, and `operators` holds A's long-Failed CSV: the uninstall started and deleted B's parts.
 * - Red team 44, H1: a record for A's namespace deleted the Operator object while B's Secret (never
 *   read) or an object of a kind olm-medic does not handle still carried the key outside it.
 * - Red team 44, H2: a record for A's namespace took the key off B's Namespace object.
 * Now: the start records A's long-Failed CSVs (`<ns>/<name>`, sorted) beside `auto` and refuses
 * while a part is OLM-marked (owner reference, olm.owner labels) as a CSV that is no live CSV under
 * the key; a recorded uninstall removes parts only in those CSVs' namespaces and only those no other
 * CSV is named owner of; anything else carrying the key keeps the Operator object. A record without
 * the list (or one that is not a list of `<namespace>/<name>`) is taken back, nothing deleted.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { componentLabelKey } from '../../shared/olm/olm.js';
import { COLLIDING, componentsSelecting, iso, NOW } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const MARKER = 'olm-medic.io/uninstall';
const CSVS = 'olm-medic.io/uninstall-csvs';
const { PKG, NS_A, NS_B, KEY, CSV, OP_NAME } = COLLIDING;
const RECORD_A = `${NS_A}/${CSV}`;

const ownedBy = (csv: string, namespace: string): Record<string, string> => ({ 'olm.owner': csv, 'olm.owner.namespace': namespace, 'olm.owner.kind': 'ClusterServiceVersion' });
const part = (apiVersion: string, kind: string, name: string, namespace: string | undefined, labels: Record<string, string> = {}, key = KEY): KubeObject => ({
  apiVersion, kind,
  metadata: { name, ...(namespace ? { namespace } : {}), uid: `${kind}-${name}`, resourceVersion: '40', creationTimestamp: iso(86400 * 30), labels: { [key]: '', ...labels } },
});
const failedCsv = (name: string, namespace: string, key = KEY): KubeObject => ({
  ...part('operators.coreos.com/v1alpha1', 'ClusterServiceVersion', name, namespace, {}, key),
  spec: {},
  status: { phase: 'Failed', reason: 'InstallComponentFailed', lastTransitionTime: iso(7200), lastUpdateTime: iso(7200) },
});
const idle = (d: KubeObject): KubeObject => ({ ...d, spec: { replicas: 0 }, status: { replicas: 0, conditions: [{ type: 'Available', status: 'True' }] } });

/** A's leftover ClusterRole (its CSV already deleted by the uninstall) and B's parts, orphaned, its Deployment scaled to zero. */
function parts(o: { withA?: boolean } = {}): KubeObject[] {
  const crA = part('rbac.authorization.k8s.io/v1', 'ClusterRole', 'telemetry-controller-a-abc12', undefined, ownedBy(CSV, NS_A));
  const b = [part('v1', 'ServiceAccount', 'telemetry-controller', NS_B), part('rbac.authorization.k8s.io/v1', 'Role', 'telemetry-controller-b-xyz98', NS_B), part('v1', 'ConfigMap', 'telemetry-settings', NS_B), idle(part('apps/v1', 'Deployment', 'telemetry-controller', NS_B))];
  return [...(o.withA === false ? [] : [crA]), ...b];
}

/** The Operator `name` listing `ps`, with a record if `marker` is given (set only by olm-medic's field manager, an hour ago): `csvs` if given. */
function operator(ps: KubeObject[], marker?: 'auto' | 'true', csvs?: string, name = OP_NAME, key = KEY): KubeObject {
  const fields: Record<string, unknown> = { [`f:${MARKER}`]: {}, ...(csvs !== undefined ? { [`f:${CSVS}`]: {} } : {}) };
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: {
      name, uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60),
      ...(marker ? {
        annotations: { [MARKER]: marker, ...(csvs !== undefined ? { [CSVS]: csvs } : {}) },
        managedFields: [{ manager: 'olm-medic', operation: 'Update', apiVersion: 'operators.coreos.com/v1', time: iso(3600), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': fields } } }],
      } : {}),
    } as KubeObject['metadata'],
    spec: {},
    status: { components: componentsSelecting(key, ps) },
  };
}

async function update(objects: KubeObject[], name = OP_NAME): Promise<string[]> {
  const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
  const { kube, writes } = recordingKube(objects, { now: () => NOW, patchBody: true });
  await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name }));
  return [...new Set(writes)];
}
const recordPatch = (value: string | null, name = OP_NAME) =>
  `patch Operator /${name} {"metadata":{"annotations":{"${MARKER}":${value ? '"auto"' : 'null'},"${CSVS}":${value ? JSON.stringify(value) : 'null'}},"resourceVersion":"60"}}`;
const deletes = (writes: string[]) => writes.filter((w) => w.startsWith('delete')).sort();

describe('premise', () => {
  it('the keys collide', () => {
    expect(componentLabelKey(PKG, NS_B)).toBe(KEY);
  });
});

describe('a record that does not name its CSVs is taken back, nothing deleted', () => {
  it("legacy `true` (olm-medic's own, before C1): B's ServiceAccount, Role, ConfigMap and idle Deployment are not deleted", async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'true')]);
    expect(deletes(writes), "B's parts deleted on A's legacy record").toEqual([]);
    expect(writes).toEqual([recordPatch(null)]);
  });

  it('`auto` without its CSVs (8f97ca8, before C1): the same', async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'auto')]);
    expect(deletes(writes), "B's parts deleted on A's pre-C1 record").toEqual([]);
    expect(writes).toEqual([recordPatch(null)]);
  });

  it.each([['empty', ''], ['a namespace only', NS_A], ['a path', `${NS_A}/../x/${CSV}`], ['upper case', `Platform-Monitoring-EU/${CSV}`], ['a trailing comma', `${RECORD_A},`]])('one whose CSV list is %s', async (_what, value) => {
    const ps = parts();
    expect(await update([...ps, operator(ps, 'auto', value)])).toEqual([recordPatch(null)]);
  });
});

describe('a recorded uninstall removes parts only where its CSVs were', () => {
  it("a record of A's CSV: A's leftover is deleted, B's parts are not, the record stands", async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'auto', RECORD_A)]);
    expect(deletes(writes)).toEqual(['delete ClusterRole /telemetry-controller-a-abc12']);
    expect(writes.filter((w) => w.startsWith('patch')), 'no record taken back, no label removed from B').toEqual([]);
  });

  it("A's parts gone, B's left: the Operator object is kept, nothing written", async () => {
    const ps = parts({ withA: false });
    expect(await update([...ps, operator(ps, 'auto', RECORD_A)])).toEqual([]);
  });

  it.each([
    ['a Secret (never read)', part('v1', 'Secret', 'telemetry-controller-service-cert', NS_B)],
    ['a kind olm-medic does not handle', part('monitoring.coreos.com/v1', 'ServiceMonitor', 'telemetry-controller', NS_B)],
  ])("red team 44 H1: B's %s outside the record keeps the Operator object", async (_what, b) => {
    expect(await update([b, operator([b], 'auto', RECORD_A)]), `Operator deleted while ${b.kind} ${NS_B}/${b.metadata.name} carries the key`).toEqual([]);
  });

  it("twin: the same Secret where A's CSV was keeps it too", async () => {
    const s = part('v1', 'Secret', 'telemetry-controller-service-cert', NS_A);
    expect(await update([s, operator([s], 'auto', RECORD_A)])).toEqual([]);
  });

  it("red team 44 H2: B's Namespace object (with or without B's Secret) keeps its label", async () => {
    for (const ps of [[part('v1', 'Namespace', NS_B, undefined)], [part('v1', 'Namespace', NS_B, undefined), part('v1', 'Secret', 'telemetry-controller-service-cert', NS_B)]]) {
      const writes = await update([...ps, operator(ps, 'auto', RECORD_A)]);
      expect(writes, `B's Namespace written to on a record for ${NS_A}`).toEqual([]);
    }
  });

  it("twin: A's own Namespace object is unlabelled", async () => {
    const ps = [part('v1', 'Namespace', NS_A, undefined)];
    expect(await update([...ps, operator(ps, 'auto', RECORD_A)])).toContain(`patch Namespace /${NS_A} {"metadata":{"labels":{"${KEY}":null},"resourceVersion":"40"}}`);
  });

  it("a kept CRD is not unlabelled while B's parts keep the Operator object anyway; once they are gone, it is", async () => {
    const crd = part('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'telemetrypipelines.observability.example.com', undefined);
    const withB = [crd, ...parts({ withA: false })];
    expect(await update([...withB, operator(withB, 'auto', RECORD_A)])).toEqual([]);
    expect(await update([crd, operator([crd], 'auto', RECORD_A)])).toEqual([`patch CustomResourceDefinition /${crd.metadata.name} {"metadata":{"labels":{"${KEY}":null},"resourceVersion":"40"}}`]);
  });

  it('twin: a record of both CSVs (both decided) removes B\'s parts too', async () => {
    const ps = parts();
    expect(deletes(await update([...ps, operator(ps, 'auto', `${RECORD_A},${NS_B}/${CSV}`)]))).toEqual([
      'delete ClusterRole /telemetry-controller-a-abc12',
      `delete ConfigMap ${NS_B}/telemetry-settings`,
      `delete Deployment ${NS_B}/telemetry-controller`,
      `delete Role ${NS_B}/telemetry-controller-b-xyz98`,
      `delete ServiceAccount ${NS_B}/telemetry-controller`,
    ]);
  });
});

describe('the start records the long-Failed CSVs it rests on', () => {
  it('two installs under one key, both long Failed: `auto` with both CSVs, sorted', async () => {
    const csvs = [failedCsv(CSV, NS_B), failedCsv(CSV, NS_A)];
    expect(await update([...csvs, operator(csvs)])).toEqual([recordPatch(`${RECORD_A},${NS_B}/${CSV}`)]);
  });
});

describe("the start counts every part's namespace", () => {
  it.each([
    ['Namespace object', part('v1', 'Namespace', NS_B, undefined)],
    ['Secret (never read)', part('v1', 'Secret', 'telemetry-controller-service-cert', NS_B)],
  ])("B's %s under the key, no CSV of B: no automatic uninstall (red team 44 H2's start)", async (_what, b) => {
    const ps = [failedCsv(CSV, NS_A), b];
    expect(await update([...ps, operator(ps)])).toEqual([]);
  });
});

describe('red team 44 H3: two installs under one key in one namespace', () => {
  const NS = 'operators';
  const PKG_A = 'cluster-observability-and-telemetry-operator-for-production-fleet-east';
  const PKG_B = 'cluster-observability-and-telemetry-operator-for-production-fleet-west';
  const KEY_AB = componentLabelKey(PKG_A, NS);
  const NAME = KEY_AB.slice('operators.coreos.com/'.length);
  const CSV_A = `${PKG_A}.v1.2.0`;
  const CSV_B = `${PKG_B}.v3.0.1`;
  // B taken off OLM with --cascade=orphan: no owner references, OLM's olm.owner labels stay (the
  // Deployment's and Role's: olm-facts §4); the ServiceAccount and ConfigMap carry none.
  const partsB = (): KubeObject[] => [
    part('v1', 'ServiceAccount', 'telemetry-west-controller', NS, {}, KEY_AB),
    part('rbac.authorization.k8s.io/v1', 'Role', 'telemetry-west-controller-abc12', NS, ownedBy(CSV_B, NS), KEY_AB),
    part('v1', 'ConfigMap', 'telemetry-west-settings', NS, {}, KEY_AB),
    idle(part('apps/v1', 'Deployment', 'telemetry-west-controller', NS, ownedBy(CSV_B, NS), KEY_AB)),
  ];
  const csvA = failedCsv(CSV_A, NS, KEY_AB);

  it('premise: one key for both', () => {
    expect(componentLabelKey(PKG_B, NS)).toBe(KEY_AB);
  });

  it("the start refuses: B's Role and Deployment are OLM-marked as B's CSV, which is gone", async () => {
    const ps = [csvA, ...partsB()];
    expect(await update([...ps, operator(ps, undefined, undefined, NAME, KEY_AB)], NAME)).toEqual([]);
  });

  it("twin: A's own parts (olm.owner: A's CSV) do not hold the start back", async () => {
    const ps = [csvA, part('rbac.authorization.k8s.io/v1', 'Role', 'telemetry-east-controller-abc12', NS, ownedBy(CSV_A, NS), KEY_AB)];
    expect(await update([...ps, operator(ps, undefined, undefined, NAME, KEY_AB)], NAME)).toEqual([recordPatch(`${NS}/${CSV_A}`, NAME)]);
  });

  it("a record of A's CSV (B's parts orphaned since): B's OLM-marked parts are kept, so are the unmarked ones beside them (no telling whose), and the Operator object", async () => {
    const ps = partsB();
    const writes = await update([...ps, operator([csvA, ...ps], 'auto', `${NS}/${CSV_A}`, NAME, KEY_AB)], NAME);
    expect(deletes(writes), "B's parts deleted on A's record").toEqual([]);
  });

  it("twin: A's own unmarked ServiceAccount, with nothing of another CSV beside it, goes", async () => {
    const ps = [part('v1', 'ServiceAccount', 'telemetry-east-controller', NS, {}, KEY_AB)];
    expect(deletes(await update([...ps, operator([csvA, ...ps], 'auto', `${NS}/${CSV_A}`, NAME, KEY_AB)], NAME))).toEqual([`delete ServiceAccount ${NS}/telemetry-east-controller`]);
  });

  it('a long-Failed CSV under the key that the record does not name (it appeared since) is not deleted', async () => {
    const csvB = failedCsv(CSV_B, NS, KEY_AB);
    expect(deletes(await update([csvB, operator([csvB], 'auto', `${NS}/${CSV_A}`, NAME, KEY_AB)], NAME))).toEqual([]);
  });
});
