/**
 * ownerref-repair: the pure decision (olm-facts §2). An InstallPlan must be owned (non-blocking,
 * never controller) by every Subscription whose status.installPlanRef points at it (name AND uid)
 * and that it really serves; and carry the operators.coreos.com/<pkg>.<ns> component label.
 * One merge patch with the full ownerReferences list and a resourceVersion precondition, so two
 * concurrent repairs can never lose an owner: the loser gets 409, re-reads and re-plans.
 */
import type { Action, Plan, PlanContext } from '../../shared/core/types.js';
import { target } from '../../shared/core/types.js';
import type { KubeObject, OwnerReference } from '../../shared/kube/types.js';
import { ANN_GENERATED_BY, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { componentLabelKey, seconds } from '../../shared/olm/olm.js';
import { isLabelKey } from '../../shared/kube/validate.js';

export interface Observed {
  installPlan: KubeObject;
  /** Subscriptions in the InstallPlan's namespace. */
  subscriptions: KubeObject[];
  /**
   * Only the plan's metadata was read (a recent metadata list during a burst of Subscription
   * events): enough to see that these Subscriptions' parts already hold, never to repair.
   */
  metadataOnly?: boolean;
}

interface SubStatus {
  currentCSV?: string;
  installPlanRef?: { name?: string; namespace?: string; uid?: string; kind?: string };
  installplan?: { name?: string; uuid?: string };
}

/** Why `sub` is (or is not) a Subscription this plan must be owned by. */
export function servesPlan(sub: KubeObject, ip: KubeObject): { ok: true } | { ok: false; why: string } {
  if (sub.metadata.deletionTimestamp) return { ok: false, why: 'being deleted' };
  // (An opted-out Subscription may serve the plan: plan() leaves its part alone, refused by policy with an Event.)
  const st = (sub.status ?? {}) as SubStatus;
  const ref = st.installPlanRef;
  if (!ref || ref.name !== ip.metadata.name) return { ok: false, why: 'installPlanRef points elsewhere' };
  if (ref.uid !== ip.metadata.uid) return { ok: false, why: `installPlanRef uid ${ref.uid} is not this plan's uid` };
  if (ref.namespace && ref.namespace !== ip.metadata.namespace) return { ok: false, why: 'installPlanRef namespace differs' };
  if (st.installplan?.uuid && st.installplan.uuid !== ip.metadata.uid) return { ok: false, why: 'status.installplan.uuid differs' };
  const csvs = ((ip.spec as { clusterServiceVersionNames?: string[] } | undefined)?.clusterServiceVersionNames ?? []);
  const generatedBy = sub.metadata.annotations?.[ANN_GENERATED_BY];
  if (!(st.currentCSV && csvs.includes(st.currentCSV)) && generatedBy !== ip.metadata.name) {
    return { ok: false, why: `currentCSV ${st.currentCSV ?? '(none)'} is not in the plan's clusterServiceVersionNames` };
  }
  return { ok: true };
}

/**
 * Whether `sub`'s part of the plan already holds on the plan's METADATA alone: the plan is the one
 * its installPlanRef names (name and uid), is owned by it and carries its component label (or its
 * key is one no label can have). Then plan() is noop for `sub` whatever the plan's spec says: if it
 * serves the plan, nothing of its part is missing; if it does not, it claims nothing.
 */
export function claimHeld(sub: KubeObject, ip: KubeObject): boolean {
  const ref = ((sub.status ?? {}) as SubStatus).installPlanRef;
  if (!ref || ref.name !== ip.metadata.name || !ip.metadata.uid || ref.uid !== ip.metadata.uid) return false;
  if (sub.metadata.namespace !== ip.metadata.namespace || !sub.metadata.uid) return false;
  if (!(ip.metadata.ownerReferences ?? []).some((r) => r.uid === sub.metadata.uid)) return false;
  const k = componentLabelKey((sub.spec as { name?: string } | undefined)?.name ?? '', sub.metadata.namespace!);
  return k in (ip.metadata.labels ?? {}) || k.endsWith('/.') || !isLabelKey(k);
}

export function subscriptionOwner(sub: KubeObject): OwnerReference {
  return { apiVersion: V1ALPHA1, kind: 'Subscription', name: sub.metadata.name, uid: sub.metadata.uid!, controller: false, blockOwnerDeletion: false };
}

export const defaults = {
  /**
   * OLM's adoption controller (olm-operator) adds the component label to a new InstallPlan shortly
   * after catalog-operator creates it: a label-only repair waits this long, so a healthy install
   * never sees an olm-medic write (a missing owner is repaired at once: OLM never adds it later).
   */
  labelGraceSeconds: 120,
};

export function plan(o: Observed, ctx: PlanContext): Plan {
  const ip = o.installPlan;
  if (ip.metadata.deletionTimestamp) return { kind: 'noop', reason: 'InstallPlan is being deleted' };
  if (o.metadataOnly) {
    // Metadata proves a part holds; it cannot prove one is missing (that needs the plan's spec): re-check live.
    return o.subscriptions.every((s) => claimHeld(s, ip))
      ? { kind: 'noop', reason: 'owners and labels complete (recent InstallPlan metadata)' }
      : { kind: 'requeue', afterSeconds: 1, reason: 'only the InstallPlan\'s metadata was read: re-check it live' };
  }
  const owners = ip.metadata.ownerReferences ?? [];
  const labels = ip.metadata.labels ?? {};
  const claims = o.subscriptions.filter((s) => servesPlan(s, ip).ok);
  const missingOwner = (s: KubeObject): boolean => !owners.some((r) => r.uid === s.metadata.uid);
  // spec.name is user-editable: a key the apiserver would reject must not sink the owner repair.
  const keyOf = (s: KubeObject): string => componentLabelKey((s.spec as { name?: string } | undefined)?.name ?? '', s.metadata.namespace!);
  const missingLabel = (k: string): boolean => !(k in labels) && !k.endsWith('/.') && isLabelKey(k);
  // A missing label alone is a finding only after OLM's adoption controller had its time to add it.
  const created = seconds(ip.metadata.creationTimestamp);
  const grace = Number(ctx.options.labelGraceSeconds ?? defaults.labelGraceSeconds);
  const now = ctx.now.getTime() / 1000;
  const inGrace = created === undefined || now < created + grace;
  const graceWait = Math.max(1, Math.ceil((created ?? now) + grace - now));
  const labelWait = "component label missing, but OLM's adoption controller may still add it";
  // The finding hangs on the Subscription: an opted-out one's part is left alone, and said so.
  const isOptedOut = (s: KubeObject): boolean => s.metadata.annotations?.[MEDIC.optOut] === 'true';
  const optedOutLabelOnly = claims.filter((s) => isOptedOut(s) && !missingOwner(s) && missingLabel(keyOf(s)));
  const optedOut = claims.filter((s) => isOptedOut(s) && (missingOwner(s) || (!inGrace && optedOutLabelOnly.includes(s))));
  const serving = claims.filter((s) => !isOptedOut(s));
  const missingOwners = serving.filter(missingOwner);
  const missingLabels = [...new Set(serving.map(keyOf).filter(missingLabel))];
  if (missingOwners.length === 0 && missingLabels.length === 0 && optedOut.length === 0) {
    if (inGrace && optedOutLabelOnly.length) return { kind: 'requeue', afterSeconds: graceWait, reason: labelWait };
    return { kind: 'noop', reason: serving.length ? 'owners and labels complete' : 'no Subscription references this InstallPlan' };
  }
  const t = { ...target(ip), resourceVersion: ip.metadata.resourceVersion! };
  // Each opted-out Subscription's part is an optional action policy refuses (a Warning Event on that
  // Subscription); it never holds back the others' repair.
  const refused: Action[] = optedOut.map((s) => ({
    verb: 'patch',
    target: t,
    optional: true,
    regarding: target(s),
    patch: { metadata: { ownerReferences: [...owners, subscriptionOwner(s)] } },
    reason: 'InstallPlanOwnerAdded',
    note: `add Subscription ${s.metadata.name}'s part (ownerReference, component label) to InstallPlan ${ip.metadata.name}, which its status.installPlanRef names`,
  }));
  if (missingOwners.length === 0 && missingLabels.length > 0 && inGrace) {
    return refused.length ? { kind: 'act', actions: refused, summary: labelWait, othersRecheckAfterSeconds: graceWait } : { kind: 'requeue', afterSeconds: graceWait, reason: labelWait };
  }
  // An opted-out Subscription's label-only part is looked at again when the grace ends.
  const later = inGrace && optedOutLabelOnly.length ? { othersRecheckAfterSeconds: graceWait } : {};
  if (missingOwners.length === 0 && missingLabels.length === 0) {
    return { kind: 'act', actions: refused, summary: `InstallPlan ${ip.metadata.name}: only opted-out Subscriptions miss their part`, ...later };
  }
  const names = missingOwners.map((s) => s.metadata.name);
  const patch: { metadata: Record<string, unknown> } = { metadata: {} };
  if (missingOwners.length) patch.metadata.ownerReferences = [...owners, ...missingOwners.map(subscriptionOwner)];
  if (missingLabels.length) patch.metadata.labels = Object.fromEntries(missingLabels.map((k) => [k, '']));
  const what = [
    missingOwners.length && `ownerReference to Subscription ${names.join(', ')} (non-blocking, not controller)`,
    missingLabels.length && `component label ${missingLabels.join(', ')}`,
  ].filter(Boolean);
  return {
    kind: 'act',
    summary: `repaired InstallPlan ${ip.metadata.name}`,
    ...later,
    actions: [
      ...refused,
      {
        verb: 'patch',
        target: t,
        patch,
        reason: missingOwners.length ? 'InstallPlanOwnerAdded' : 'InstallPlanLabelRestored',
        note: `Added ${what.join(' and ')} to InstallPlan ${ip.metadata.name}: the Subscription's status.installPlanRef (name and uid) points at it and it installs its CSV.`,
      },
    ],
  };
}
