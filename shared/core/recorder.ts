/**
 * Kubernetes Events (events.k8s.io/v1) for every action and every refusal.
 * The Event name is derived from (function, reason, regarding, target state), so duplicate and
 * replayed CloudEvents about the same object state produce one Event, not a flood.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { isKubeError } from '../kube/errors.js';
import type { KubeObject, Ref, Writer } from '../kube/types.js';
import type { EventType } from './types.js';

export interface EventRecord {
  fn: string;
  regarding: Ref & { uid?: string };
  related?: Ref & { uid?: string };
  reason: string;
  note: string;
  type: EventType;
  /** What olm-medic did: Delete, Patch, Refuse, Defer. */
  action: string;
  /** Distinguishes decisions about different states of the same object. */
  stateKey: string;
}

export interface Recorder {
  record(e: EventRecord): Promise<void>;
}

export const REPORTING_CONTROLLER_PREFIX = 'olm-medic.io/';

export function createRecorder(
  writer: Writer,
  now: () => Date,
  onResult: (result: 'created' | 'duplicate' | 'error', err?: unknown) => void,
  instance = hostname(),
): Recorder {
  return {
    async record(e) {
      const ev = buildEvent(e, now(), instance);
      try {
        try {
          await writer.create(ev, { dryRun: false });
        } catch (err) {
          // A namespace being deleted takes no new content, Events included (NamespaceLifecycle
          // admission) — and deleting a namespace is how most CSVs go: record it in "default", which
          // events.k8s.io/v1 allows for a namespaced `regarding` (red team 28a, E2).
          if (!(isKubeError(err) && err.namespaceTerminating) || ev.metadata.namespace === 'default') throw err;
          await writer.create({ ...ev, metadata: { ...ev.metadata, namespace: 'default' } }, { dryRun: false });
        }
        onResult('created');
      } catch (err) {
        const dup = (err as { alreadyExists?: boolean }).alreadyExists === true;
        onResult(dup ? 'duplicate' : 'error', dup ? undefined : err);
      }
    },
  };
}

export function buildEvent(e: EventRecord, at: Date, instance: string): KubeObject {
  const key = createHash('sha256')
    .update([e.fn, e.reason, e.regarding.kind, e.regarding.namespace ?? '', e.regarding.name, e.regarding.uid ?? '', e.stateKey].join('\0'))
    .digest('hex')
    .slice(0, 16);
  const ref = (r: Ref & { uid?: string }): Record<string, string> => ({
    apiVersion: r.apiVersion,
    kind: r.kind,
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
    ...(r.uid ? { uid: r.uid } : {}),
  });
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: `${eventNamePrefix(e.regarding.name)}.${key}`,
      // Events about cluster-scoped objects (Node, Operator, ClusterRole) live in "default".
      namespace: e.regarding.namespace || 'default',
      labels: { 'app.kubernetes.io/managed-by': 'olm-medic', 'olm-medic.io/function': e.fn },
    },
    eventTime: microTime(at),
    reportingController: `${REPORTING_CONTROLLER_PREFIX}${e.fn}`,
    reportingInstance: instance.slice(0, 128),
    action: e.action,
    reason: e.reason,
    note: utf8Prefix(e.note, NOTE_LIMIT_BYTES),
    type: e.type,
    regarding: ref(e.regarding),
    ...(e.related ? { related: ref(e.related) } : {}),
  };
}

/** The apiserver's limit on an Event's note, in bytes (Go's len: NoteLengthLimit, core/validation/events.go). */
export const NOTE_LIMIT_BYTES = 1024;

/**
 * The longest prefix of `s` whose UTF-8 encoding fits `limit` bytes, cut on a character boundary. A
 * cut at 1,024 UTF-16 units let a note naming a non-ASCII ClusterRole or quoting a condition reach
 * ~3 KB: the apiserver refused the Event (422) and the action went unrecorded (red team 28a E1, 28b).
 */
export function utf8Prefix(s: string, limit: number): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= limit) return s;
  let end = limit;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--; // b[end] continues the character before it
  return b.subarray(0, end).toString('utf8');
}

/** metav1.MicroTime: RFC3339 with microseconds. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * The object's name as the start of an Event name, which must be a DNS-1123 subdomain: an RBAC name
 * may be any path segment ("system:x", "evil role"), and a cut at 200 characters may end on "-" or
 * "." (red team 15, E1: the apiserver refused such an Event and the action went unrecorded).
 */
export function eventNamePrefix(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .slice(0, 200)
    .replace(/[-.]*\.[-.]*/g, '.')
    .replace(/^[-.]+|[-.]+$/g, '');
  return cleaned || 'object';
}
