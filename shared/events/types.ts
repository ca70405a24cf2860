import type { KubeObject, Ref } from '../kube/types.js';

/** Input no apiserver event could be: a 4xx naming what is wrong (decode.ts, and targets the functions derive from an event's data). */
export class BadRequest extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'BadRequest';
  }
}

export type Verb = 'add' | 'update' | 'delete';

/** Where an event came from, for logs, metrics and dedup. */
export interface EventMeta {
  id: string;
  source: string;
  type: string;
  subject?: string;
}

/** A change to one Kubernetes object, from a Knative ApiServerSource. */
export interface ResourceTrigger {
  kind: 'resource';
  verb: Verb;
  /** Resource mode carries the object; Reference mode only the ref (the function must read). */
  mode: 'resource' | 'reference';
  ref: Ref;
  object?: KubeObject;
  meta: EventMeta;
}

/** A request to sweep: reconcile everything the functions care about (PingSource tick, CLI). */
export interface SweepTrigger {
  kind: 'sweep';
  /** Optional scope from the ping payload: {"functions": [...], "namespace": "..."}. */
  functions?: string[];
  namespace?: string;
  meta: EventMeta;
}

/** A well-formed CloudEvent no function handles (another source's type). Answered 2xx. */
export interface ForeignTrigger {
  kind: 'foreign';
  meta: EventMeta;
}

export type Trigger = ResourceTrigger | SweepTrigger | ForeignTrigger;
