/**
 * The Kubernetes Event olm-medic records for an action is named `<regarding name>.<hash>` and must be
 * a DNS-1123 subdomain (events.k8s.io validates it; a 422 loses the Event that explains the action).
 * Red team 15 (E1): a valid name cut at 200 characters on a "-" or "." made it invalid (failed on
 * 0d3eb71); so did RBAC names, which may be any path segment.
 */
import { describe, expect, it } from 'vitest';
import { buildEvent } from '../../shared/core/recorder.js';
import { isDnsSubdomain } from '../../shared/kube/validate.js';

describe('RT15-E1 Event names are valid for every valid regarding name', () => {
  it.each([
    ['a "-" at the cut', `${'a'.repeat(199)}-${'b'.repeat(20)}`],
    ['a "." at the cut', `${'a'.repeat(60)}.${'a'.repeat(60)}.${'a'.repeat(60)}.${'a'.repeat(16)}.${'b'.repeat(20)}`],
  ])('a CSV named with %s', (_what, name) => {
    expect(isDnsSubdomain(name), 'the premise: the CSV name is valid').toBe(true);
    const ev = buildEvent(
      { fn: 'finalizer-cleanup', regarding: { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: 'ns', name, uid: 'u' }, reason: 'CsvOwnedObjectDeleted', note: 'n', type: 'Normal', action: 'Delete', stateKey: 's' },
      new Date('2026-01-01T00:00:00Z'),
      'host',
    );
    expect(isDnsSubdomain(ev.metadata.name), `Event name ${ev.metadata.name.slice(190)}`).toBe(true);
  });

  it.each([['system:controller:operator-lifecycle-manager'], ['evil role'], ['Upper.Case..dots'], [':::']])('a ClusterRole named %j (RBAC names are any path segment)', (name) => {
    const ev = buildEvent(
      { fn: 'finalizer-cleanup', regarding: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name, uid: 'u' }, reason: 'CsvOwnedObjectDeleted', note: 'n', type: 'Normal', action: 'Delete', stateKey: 's' },
      new Date('2026-01-01T00:00:00Z'),
      'host',
    );
    expect(isDnsSubdomain(ev.metadata.name), `Event name ${ev.metadata.name}`).toBe(true);
  });
});
