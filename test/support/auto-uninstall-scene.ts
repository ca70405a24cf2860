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
 *                                    update of the Operator handled at NOW.
 */
import { allFunctions } from '../../functions/index.js';
import { loadConfig, type Config } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { handleOnce, recordingKube, refUpdate } from './fake-runtime.js';

export const NOW = new Date('2026-06-01T12:00:00Z');
export const iso = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const KEY = 'operators.coreos.com/etcd.ns-a';

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
