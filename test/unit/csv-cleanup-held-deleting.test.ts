/**
 * Red team 21 (failed on 3059676), F1: the CSV olm-medic holds with its own finalizer stays Terminating forever behind an
 * owned object that someone else's finalizer holds. planCsv waits for every owned object with a
 * deletionTimestamp (`o.owned.some((x) => x.metadata.deletionTimestamp)` -> requeue), and 8264957
 * only made that wait longer (deletingWait: up to 60 s), never bounded: the CSV cannot go, and a
 * reinstall of the same CSV name cannot be created, for as long as the foreign finalizer stays
 * (here a day). README: "Our own finalizer is always released ... a leftover olm-medic cannot delete:
 * the CSV loses olm-medic.io/csv-cleanup (the cleanup is skipped and said so in an Event) rather than
 * stay Terminating." An object olm-medic cannot make go is such a leftover; a deletingWait comment
 * itself names this case ("one held by someone else's finalizer").
 */
import { describe, expect, it } from 'vitest';
import { defaults, planCsv } from '../../functions/finalizer-cleanup/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { csv, csvClusterRole, rfc3339 } from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const NS = 'operators';
const NAME = 'etcdoperator.v0.9.4';
const ago = (s: number) => rfc3339(new Date(NOW.getTime() - s * 1000));

describe('redteam21 F1: our CSV finalizer is not held forever by an owned object another finalizer holds', () => {
  const look = (heldFor: number) => {
    const c = csv({ namespace: NS, name: NAME, finalizers: ['olm-medic.io/csv-cleanup'] }) as unknown as KubeObject;
    c.metadata = { ...c.metadata, uid: 'csv-uid', resourceVersion: '10', creationTimestamp: ago(7 * 86_400), deletionTimestamp: ago(heldFor) };
    const cr = csvClusterRole({ csvName: NAME, csvNamespace: NS }) as unknown as KubeObject;
    cr.metadata = { ...cr.metadata, uid: 'cr-uid', resourceVersion: '11', creationTimestamp: ago(7 * 86_400), deletionTimestamp: ago(heldFor), finalizers: ['backup.example.com/protect'] };
    return planCsv({ kind: 'csv', csvRef: { apiVersion: c.apiVersion, kind: c.kind, namespace: NS, name: NAME }, csv: c, owned: [cr] }, { now: NOW, options: { ...defaults }, policy: { dryRun: false, protectedNamespaces: new Set() } });
  };

  it('control: held 60 s (a finalizer doing its work): the CSV waits for it', () => {
    expect(look(60)).toMatchObject({ kind: 'requeue' });
  });

  it('owned ClusterRole Terminating for a day under a foreign finalizer: the CSV is released (its deletions requested), not waited on every 60 s forever', () => {
    const p = look(86_400);
    expect(p.kind === 'requeue' ? `requeue ${p.afterSeconds}s: ${p.reason}` : p.kind).toBe('act');
    expect(p.kind === 'act' && p.actions.some((a) => a.releasesOwnFinalizer)).toBe(true);
  });
});
