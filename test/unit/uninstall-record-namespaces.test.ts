/**
 * A recorded automatic uninstall removes parts only in the namespaces it was decided for
 * (olm-medic.io/uninstall-namespaces); a record without them is taken back.
 *
 * The hole (left open in stop 28's note, after red team 42): a recorded uninstall cannot re-check C1
 * (every namespace holding a part under the key holds a long-Failed CSV), because its own first
 * stage deletes that evidence. A record written by an olm-medic from before C1 — a legacy `true`
 * (<= b8082f5) or an `auto` of 8f97ca8 — under a key two installs share (names truncated to the
 * same 63 characters, olm-facts §2.2) went on to delete the other install's ServiceAccount, Role and
 * ConfigMap once A's CSV was gone. Red team 42's fix kept only a SERVING Deployment; an install whose
 * Deployment is scaled to zero (or crash-looping) lost the rest of its parts.
 * Now: the start records the namespaces of its long-Failed CSVs beside `auto`; a recorded uninstall
 * deletes parts there only, and the Operator object stays while another namespace's parts carry the
 * key. A record without namespaces (or with a value that is not a list of namespace names) is taken
 * back (AutoUninstallCancelled), nothing deleted: where the CSVs are still there, the next look
 * decides afresh with today's checks; where they are gone, the admin is told to annotate `true`.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { componentLabelKey } from '../../shared/olm/olm.js';
import { componentsSelecting } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const iso = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const MARKER = 'olm-medic.io/uninstall';
const NAMESPACES = 'olm-medic.io/uninstall-namespaces';
const PKG = 'cluster-observability-and-telemetry-operator';
const NS_A = 'platform-monitoring-eu';
const NS_B = 'platform-monitoring-us';
const KEY = componentLabelKey(PKG, NS_A);
const CSV = `${PKG}.v1.2.0`;
const OP_NAME = KEY.slice('operators.coreos.com/'.length);

const part = (apiVersion: string, kind: string, name: string, namespace: string | undefined, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion, kind,
  metadata: { name, ...(namespace ? { namespace } : {}), uid: `${kind}-${name}`, resourceVersion: '40', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '', ...labels } },
});

/** A's leftover ClusterRole (its CSV already deleted by the uninstall) and B's parts, orphaned, its Deployment scaled to zero. */
function parts(o: { withA?: boolean } = {}): KubeObject[] {
  const crA = part('rbac.authorization.k8s.io/v1', 'ClusterRole', 'telemetry-controller-a-abc12', undefined, { 'olm.owner': CSV, 'olm.owner.namespace': NS_A, 'olm.owner.kind': 'ClusterServiceVersion' });
  const depB: KubeObject = { ...part('apps/v1', 'Deployment', 'telemetry-controller', NS_B), spec: { replicas: 0 }, status: { replicas: 0, conditions: [{ type: 'Available', status: 'True' }] } };
  const b = [part('v1', 'ServiceAccount', 'telemetry-controller', NS_B), part('rbac.authorization.k8s.io/v1', 'Role', 'telemetry-controller-b-xyz98', NS_B), part('v1', 'ConfigMap', 'telemetry-settings', NS_B), depB];
  return [...(o.withA === false ? [] : [crA]), ...b];
}

/** The Operator with a record: `marker` (set only by olm-medic's field manager, an hour ago) and `namespaces` if given. */
function operator(ps: KubeObject[], marker: 'auto' | 'true', namespaces?: string): KubeObject {
  const fields: Record<string, unknown> = { [`f:${MARKER}`]: {}, ...(namespaces !== undefined ? { [`f:${NAMESPACES}`]: {} } : {}) };
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: {
      name: OP_NAME, uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60),
      annotations: { [MARKER]: marker, ...(namespaces !== undefined ? { [NAMESPACES]: namespaces } : {}) },
      managedFields: [
        { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1', subresource: 'status', time: iso(300), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:components': {} } } },
        { manager: 'olm-medic', operation: 'Update', apiVersion: 'operators.coreos.com/v1', time: iso(3600), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': fields } } },
      ],
    } as KubeObject['metadata'],
    spec: {},
    status: { components: componentsSelecting(KEY, ps) },
  };
}

async function update(objects: KubeObject[]): Promise<string[]> {
  const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
  const { kube, writes } = recordingKube(objects, { now: () => NOW, patchBody: true });
  await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: OP_NAME }));
  return [...new Set(writes)];
}
const cancel = `patch Operator /${OP_NAME} {"metadata":{"annotations":{"${MARKER}":null,"${NAMESPACES}":null},"resourceVersion":"60"}}`;

describe('a recorded automatic uninstall deletes parts only in the namespaces it was decided for', () => {
  it('premise: the keys collide', () => {
    expect(componentLabelKey(PKG, NS_B)).toBe(KEY);
  });

  it("legacy `true` (olm-medic's own, before C1): B's ServiceAccount, Role, ConfigMap and idle Deployment are not deleted; the record is taken back", async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'true')]);
    expect(writes.filter((w) => w.startsWith('delete')), "B's parts deleted on A's legacy record").toEqual([]);
    expect(writes).toEqual([cancel]);
  });

  it('`auto` without namespaces (8f97ca8, before C1): the same', async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'auto')]);
    expect(writes.filter((w) => w.startsWith('delete')), "B's parts deleted on A's pre-C1 record").toEqual([]);
    expect(writes).toEqual([cancel]);
  });

  it.each([['empty', ''], ['not a namespace name', `${NS_A},../kube-system`], ['upper case', 'Platform-Monitoring-EU']])('a record whose namespaces are %s is taken back, nothing deleted', async (_what, value) => {
    const ps = parts();
    expect(await update([...ps, operator(ps, 'auto', value)])).toEqual([cancel]);
  });

  it("a record naming A's namespace: A's leftover is deleted, B's parts are not, the record stands", async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'auto', NS_A)]);
    expect(writes.filter((w) => w.startsWith('delete'))).toEqual(['delete ClusterRole /telemetry-controller-a-abc12']);
    expect(writes.filter((w) => w.startsWith('patch')), 'no record taken back, no label removed from B').toEqual([]);
  });

  it("A's parts gone, B's left: the Operator object is kept (B's parts still carry the key), nothing written", async () => {
    const ps = parts({ withA: false });
    expect(await update([...ps, operator(ps, 'auto', NS_A)])).toEqual([]);
  });

  it('twin: a record naming both namespaces (both decided) removes B\'s parts too', async () => {
    const ps = parts();
    const writes = await update([...ps, operator(ps, 'auto', `${NS_A},${NS_B}`)]);
    expect(writes.filter((w) => w.startsWith('delete')).sort()).toEqual([
      'delete ClusterRole /telemetry-controller-a-abc12',
      `delete ConfigMap ${NS_B}/telemetry-settings`,
      `delete Deployment ${NS_B}/telemetry-controller`,
      `delete Role ${NS_B}/telemetry-controller-b-xyz98`,
      `delete ServiceAccount ${NS_B}/telemetry-controller`,
    ]);
  });
});

describe('the start records the namespaces of the long-Failed CSVs it rests on', () => {
  const failedCsv = (namespace: string): KubeObject => ({
    ...part('operators.coreos.com/v1alpha1', 'ClusterServiceVersion', CSV, namespace),
    spec: {},
    status: { phase: 'Failed', reason: 'InstallComponentFailed', lastTransitionTime: iso(7200), lastUpdateTime: iso(7200) },
  });

  it('two installs under one key, both long Failed: `auto` with both namespaces, sorted', async () => {
    const csvs = [failedCsv(NS_B), failedCsv(NS_A)];
    const op = operator(csvs, 'auto');
    delete op.metadata.annotations;
    (op.metadata as { managedFields?: unknown[] }).managedFields = [];
    expect(await update([...csvs, op])).toEqual([`patch Operator /${OP_NAME} {"metadata":{"annotations":{"${MARKER}":"auto","${NAMESPACES}":"${NS_A},${NS_B}"},"resourceVersion":"60"}}`]);
  });
});
