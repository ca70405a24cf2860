/**
 * Test support: the scaffolding of catalog-reschedule scenes (test/unit/catalog-reschedule-defer,
 * catalog-reschedule-recheck, dry-run-recheck). One catalog namespace (NS) whose catalog pods run
 * the index image IMAGE on the node NODE, and builders stamped relative to each file's own NOW.
 */
import { defaults } from '../../functions/catalog-reschedule/plan.js';
import { NO_POLICY, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { catalogSource, node, rfc3339, taintUnreachable } from '../fixtures/olm-objects.js';

export const NS = 'olm';
export const NODE = 'worker-1';
export const IMAGE = 'quay.io/operatorhubio/catalog:latest';

/**
 * The builders of one scene at `now` (one per test file: its own sequence).
 *   ago(s)              `now` minus s seconds;
 *   live(o, extra)      stamps the next sequence number n: name (o's, else generateName + n), uid uid-<n>,
 *                       resourceVersion 1000 + n, a creationTimestamp an hour before `now`, then `extra`;
 *   cs(name, ann?)      a live CatalogSource of NS serving IMAGE (optionally with annotations);
 *   deadNode(s)         NODE, Ready=Unknown and tainted unreachable since s seconds ago;
 *   ctx                 plan()'s context at `now` (catalog-reschedule's defaults, no policy).
 */
export function scene(now: Date) {
  const ago = (s: number): Date => new Date(now.getTime() - s * 1000);
  let seq = 0;
  const live = (o: { metadata: Record<string, unknown> } & Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject => {
    seq++;
    const md = { ...(o.metadata as Record<string, unknown>) };
    const name = (md.name as string | undefined) ?? `${(md.generateName as string | undefined) ?? 'x-'}${seq}`;
    delete md.generateName;
    return { ...o, metadata: { ...md, name, uid: `uid-${seq}`, resourceVersion: String(1000 + seq), creationTimestamp: rfc3339(ago(3600)), ...extra } } as unknown as KubeObject;
  };
  const cs = (name: string, annotations?: Record<string, string>): KubeObject =>
    live(catalogSource({ namespace: NS, name, image: IMAGE, ...(annotations ? { annotations } : {}) }) as never);
  const deadNode = (secondsAgo: number): KubeObject =>
    live(node({ name: NODE, ready: 'Unknown', since: ago(secondsAgo), taints: [taintUnreachable(ago(secondsAgo))] }) as never);
  const ctx: PlanContext = { now, options: { ...defaults }, policy: NO_POLICY };
  return { ago, live, cs, deadNode, ctx };
}
