/**
 * Burst snapshots: a catalog update touches every Subscription at once, and each Subscription's
 * event makes ownerref-repair read the InstallPlan the event names, only to find (almost always)
 * that it already holds the Subscription's owner and label. During such a burst, one cluster-wide
 * METADATA-only list of the kind (PartialObjectMetadataList: names, uids, labels, owners) answers
 * all of those asks instead of one GET each.
 *
 * The rules that keep it a read optimisation and never a reason to act:
 *  - It is used only once asks for the kind come in a burst (`threshold` within `windowMs`): a quiet
 *    cluster's event is answered by a GET as before, never by a cluster-wide list.
 *  - A snapshot is a list that STARTED after the burst was seen, and is used for at most `maxAgeMs`
 *    from that start (also by asks that waited for it); then the next burst ask starts a new one.
 *    At most one list per kind runs.
 *  - It answers an ask only if it provably started after the asker's own object was written: before
 *    the list, the asker's resource is listed once (one item) for its collection resourceVersion,
 *    and an ask whose object's resourceVersion is newer than that (compared within one resource,
 *    KEP-5504), or not comparable, gets `undefined`. So every change of the listed object that
 *    happened before the asker's object changed is in the snapshot; a later change of the listed
 *    object arrives as that object's own event, decided on a live read against the asker's state
 *    as it then is. (Without this, a plan that lost an owner while its Subscription did not serve
 *    it, then served again within the snapshot's life, was settled on the old owners: red team B1.)
 *  - An object missing from the snapshot (created since) is `undefined`: the caller reads it live.
 *  - Callers only conclude "nothing to do" from it (Reader.recentMetadata).
 *  - A failed list gives `undefined` to its waiters (they read live) and no new list for `maxAgeMs`.
 *  - The snapshot is dropped once expired (a timer), so it holds memory only during a burst.
 */
import { compareResourceVersions } from './validate.js';
import type { KubeObject, ObjectMeta, Reader, Ref, VersionedRef } from './types.js';

export interface BurstSnapshotOptions {
  /** Asks for one kind within `windowMs` that make a burst. */
  threshold: number;
  windowMs: number;
  /** How long a snapshot answers, from the start of its list. */
  maxAgeMs: number;
  /** Page size of the metadata list. */
  pageSize: number;
  now?: () => number;
}

export const BURST_SNAPSHOT_DEFAULTS: BurstSnapshotOptions = { threshold: 64, windowMs: 1_000, maxAgeMs: 5_000, pageSize: 1_000 };

interface Snapshot {
  startedAt: number;
  byKey: Map<string, ObjectMeta>;
  /** The asker's resource, and its collection resourceVersion read before the list started. */
  after: string;
  afterVersion: string;
}

interface KindState {
  /** Times of the latest asks (at most `threshold`, oldest first). */
  asks: number[];
  snapshot?: Snapshot;
  building?: Promise<Snapshot | undefined>;
  /** No new list before this time (after a failure). */
  quietUntil: number;
  expiry?: ReturnType<typeof setTimeout>;
}

const key = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;

/** Only what a "nothing to do" check reads: identity, labels, owners, deletion. */
function slim(m: ObjectMeta): ObjectMeta {
  return {
    name: m.name,
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.labels ? { labels: m.labels } : {}),
    ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
  };
}

export function burstSnapshots(inner: Reader, options: Partial<BurstSnapshotOptions> = {}): Reader {
  const o = { ...BURST_SNAPSHOT_DEFAULTS, ...options };
  const now = o.now ?? Date.now;
  const kinds = new Map<string, KindState>();

  function fresh(s: KindState, t: number): Snapshot | undefined {
    return s.snapshot && t - s.snapshot.startedAt <= o.maxAgeMs ? s.snapshot : undefined;
  }

  async function build(s: KindState, apiVersion: string, kind: string, after: VersionedRef): Promise<Snapshot | undefined> {
    const startedAt = now();
    const byKey = new Map<string, ObjectMeta>();
    let afterVersion: string | undefined;
    try {
      // The asker's collection as of now (one item, metadata only): its resourceVersion bounds the
      // asker objects this snapshot may answer for.
      for await (const _ of inner.list(after.apiVersion, after.kind, { metadataOnly: true, pageSize: 1, onListResourceVersion: (rv) => (afterVersion = rv) })) break;
      if (afterVersion === undefined) throw new Error(`no resourceVersion on the ${after.kind} list`);
      for await (const item of inner.list<KubeObject>(apiVersion, kind, { metadataOnly: true, pageSize: o.pageSize })) {
        if (item.metadata?.name) byKey.set(key(item.metadata.namespace, item.metadata.name), slim(item.metadata));
      }
    } catch {
      s.quietUntil = now() + o.maxAgeMs;
      return undefined;
    }
    const snap = { startedAt, byKey, after: `${after.apiVersion}/${after.kind}`, afterVersion };
    s.snapshot = snap;
    if (s.expiry) clearTimeout(s.expiry);
    s.expiry = setTimeout(() => {
      if (s.snapshot === snap) s.snapshot = undefined;
    }, Math.max(0, startedAt + o.maxAgeMs - now()) + 1);
    s.expiry.unref?.();
    return snap;
  }

  return {
    get: (ref) => inner.get(ref),
    list: (apiVersion, kind, opts) => inner.list(apiVersion, kind, opts),
    async recentMetadata(ref: Ref, after: VersionedRef): Promise<ObjectMeta | undefined> {
      const id = `${ref.apiVersion}/${ref.kind}`;
      let s = kinds.get(id);
      if (!s) kinds.set(id, (s = { asks: [], quietUntil: 0 }));
      const t = now();
      s.asks.push(t);
      if (s.asks.length > o.threshold) s.asks.shift();
      let snap = fresh(s, t);
      if (!snap && s.building) snap = await s.building;
      if (!snap) {
        const burst = s.asks.length >= o.threshold && t - s.asks[0]! <= o.windowMs;
        if (!burst || t < s.quietUntil) return undefined;
        const state = s;
        state.building = build(state, ref.apiVersion, ref.kind, after).finally(() => (state.building = undefined));
        snap = await state.building;
      }
      // Never older than maxAgeMs, even for an ask that waited for a slow list (red team B2).
      if (!snap || now() - snap.startedAt > o.maxAgeMs) return undefined;
      // Only for an asker whose object was written before the snapshot started (see above).
      if (snap.after !== `${after.apiVersion}/${after.kind}`) return undefined;
      const order = compareResourceVersions(after.resourceVersion, snap.afterVersion);
      if (order === undefined || order > 0) return undefined;
      return snap.byKey.get(key(ref.namespace, ref.name));
    },
  };
}
