/**
 * Test support: the scene of the automatic-uninstall clock-skew tests (test/unit/uninstall-auto-clock-skew,
 * uninstall-old-csv-clock-skew, uninstall-failed-csv-rewritten). At NOW, the Failed CSV ns-a/etcdoperator.v0.9.4 and its Operator
 * etcd.ns-a (whose components select the CSV by KEY), run through all the functions with
 * finalizer-cleanup's autoUninstall opted in:
 *   iso(secondsAgo)                  an RFC 3339 time that long before NOW;
 *   failedCsvScene(o)                [csv, operator], both created o.createdAgo seconds before NOW, the CSV
 *                                    Failed (o.reason, default InstallComponentFailed) at o.failedAgo as its
 *                                    status dates it, its lastUpdateTime o.updatedAgo (default the same),
 *                                    with o.managedFields if given;
 *   autoUninstallConfig()            loadConfig with OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL=true;
 *   operatorUpdate(objects, config)  the writes (recordingKube, patch bodies shown) of one reference-mode
 *                                    update of the Operator handled at NOW;
 *   servingDeployment(owners)        Deployment ns-a/etcd-operator under KEY, serving (1 ready, 1 available),
 *                                    with these owner references (none if not given);
 *   requestedOperator(parts)         the Operator etcd.ns-a whose uninstall a user requested (`true`), listing `parts`;
 *   recordedOperator(parts, csvs)    the Operator etcd.ns-a with olm-medic's record of an automatic uninstall
 *                                    (`auto` decided on csvs, default ns-a/etcdoperator.v0.9.4, set by its field
 *                                    manager 10 min before NOW), listing `parts`;
 *   COLLIDING                        two installs (NS_A, NS_B) of one package whose keys collide (KEY);
 *   componentsSelecting(key, parts)  an Operator's status.components as OLM writes it: selecting `key`,
 *                                    listing `parts` as refs.
 */
import { allFunctions } from '../../functions/index.js';
import { loadConfig, type Config } from '../../shared/core/config.js';
import type { KubeObject, OwnerReference } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { componentLabelKey } from '../../shared/olm/olm.js';
import { handleOnce, recordingKube, refUpdate } from './fake-runtime.js';

export const NOW = new Date('2026-06-01T12:00:00Z');
export const iso = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const KEY = 'operators.coreos.com/etcd.ns-a';

/** Two installs of one long-named package whose keys collide: `<PKG>.<NS_A>` and `<PKG>.<NS_B>` truncate to KEY; CSV is the package's, OP_NAME the Operator object's name. */
export const COLLIDING = (() => {
  const PKG = 'cluster-observability-and-telemetry-operator';
  const KEY = componentLabelKey(PKG, 'platform-monitoring-eu');
  return { PKG, NS_A: 'platform-monitoring-eu', NS_B: 'platform-monitoring-us', KEY, CSV: `${PKG}.v1.2.0`, OP_NAME: KEY.slice('operators.coreos.com/'.length) };
})();

export function failedCsvScene(o: { createdAgo: number; failedAgo: number; managedFields?: unknown[]; updatedAgo?: number; reason?: string }): KubeObject[] {
  const csv: KubeObject = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: 'etcdoperator.v0.9.4',
      namespace: 'ns-a',
      uid: 'csv-1',
      resourceVersion: '10',
      creationTimestamp: iso(o.createdAgo),
      labels: { [KEY]: '' },
      ...(o.managedFields ? { managedFields: o.managedFields } : {}),
    } as KubeObject['metadata'],
    spec: {},
    status: { phase: 'Failed', reason: o.reason ?? 'InstallComponentFailed', lastTransitionTime: iso(o.failedAgo), lastUpdateTime: iso(o.updatedAgo ?? o.failedAgo) },
  };
  const operator: KubeObject = {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: { name: 'etcd.ns-a', uid: 'op-1', resourceVersion: '11', creationTimestamp: iso(o.createdAgo) },
    spec: {},
    status: {
      components: {
        labelSelector: { matchExpressions: [{ key: KEY, operator: 'Exists' }] },
        refs: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: 'ns-a', name: 'etcdoperator.v0.9.4' }],
      },
    },
  };
  return [csv, operator];
}

export function autoUninstallConfig(): Config {
  return loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
}

export async function operatorUpdate(objects: KubeObject[], config: Config): Promise<string[]> {
  const { kube, writes } = recordingKube(objects, { now: () => NOW, patchBody: true });
  await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd.ns-a' }));
  return writes;
}

export function servingDeployment(ownerReferences?: OwnerReference[]): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'etcd-operator', namespace: 'ns-a', uid: 'dep-1', resourceVersion: '30', creationTimestamp: iso(86400), labels: { [KEY]: '' },
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    spec: { replicas: 1 },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
  };
}

export function componentsSelecting(key: string, parts: KubeObject[]): Record<string, unknown> {
  return {
    labelSelector: { matchExpressions: [{ key, operator: 'Exists' }] },
    refs: parts.map((p) => ({ apiVersion: p.apiVersion, kind: p.kind, ...(p.metadata.namespace ? { namespace: p.metadata.namespace } : {}), name: p.metadata.name })),
  };
}

/** Operator etcd.ns-a whose uninstall a user requested (`olm-medic.io/uninstall: "true"`), its refs the parts under KEY. */
export function requestedOperator(parts: KubeObject[]): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: { name: 'etcd.ns-a', uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60), annotations: { [MEDIC.uninstall]: 'true' } },
    spec: {},
    status: { components: componentsSelecting(KEY, parts) },
  };
}

export function recordedOperator(parts: KubeObject[], csvs = 'ns-a/etcdoperator.v0.9.4'): KubeObject {
  const marker = MEDIC.uninstall;
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: {
      name: 'etcd.ns-a', uid: 'op-1', resourceVersion: '11', creationTimestamp: iso(86400), annotations: { [marker]: 'auto', [MEDIC.uninstallCsvs]: csvs },
      managedFields: [{ manager: 'olm-medic', operation: 'Update', apiVersion: 'operators.coreos.com/v1', time: iso(600), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${marker}`]: {}, [`f:${MEDIC.uninstallCsvs}`]: {} } } } }],
    } as KubeObject['metadata'],
    spec: {},
    status: { components: componentsSelecting(KEY, parts) },
  };
}
