/** Minimal object shapes: olm-medic reads OLM CRs as plain JSON, so it types only what it uses. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** Identifies an object; the key a function reconciles. */
export interface Ref {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size for paginated lists (limit/continue). */
  pageSize?: number;
  /**
   * May be read together with concurrent callers asking for the same list (shared-lists.ts): the
   * list still starts after this call. Only for callers that read it through without awaiting
   * other I/O between items.
   */
  shared?: boolean;
  /**
   * Only the items' metadata (the apiserver's PartialObjectMetadataList): much smaller pages for a
   * caller that reads nothing else. Items still carry the asked apiVersion/kind.
   */
  metadataOnly?: boolean;
  /** Called with the list's resourceVersion (from its first page): the collection's state it was read at. */
  onListResourceVersion?: (resourceVersion: string) => void;
}

export interface WriteOptions {
  dryRun: boolean;
}

export interface PatchOptions extends WriteOptions {
  /** Patch the status subresource instead of the object. */
  subresource?: 'status';
}

export interface DeleteOptions extends WriteOptions {
  /** Preconditions: the delete fails with 409 unless the live object still has this uid (and rv). */
  uid: string;
  resourceVersion?: string;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
}

/** Read access, the only kind of access `observe` gets. */
export interface Reader {
  get<T extends KubeObject = KubeObject>(ref: Ref): Promise<T | undefined>;
  list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts?: ListOptions,
  ): AsyncIterable<T>;
  /**
   * During a burst of asks for one kind (burst-snapshots.ts): the object's metadata from one
   * cluster-wide metadata list at most a few seconds old that provably started after `after` (the
   * asker's own object, e.g. an event's Subscription) was written at its resourceVersion.
   * undefined: no such list at hand, or the object is not in it — read it live. Good only for
   * concluding that there is NOTHING to do; anything else is decided on a live read.
   */
  recentMetadata?(ref: Ref, after: VersionedRef): Promise<ObjectMeta | undefined>;
}

/** A resource and one of its objects' resourceVersions (an event's value: any shape until compared). */
export interface VersionedRef {
  apiVersion: string;
  kind: string;
  resourceVersion: unknown;
}

/** Write access, held by the executor alone. */
export interface Writer {
  /**
   * 'deleted': removed; 'pending': still present, held by finalizers (deletionTimestamp set);
   * 'gone': it did not exist (that is success, not an error).
   */
  delete(ref: Ref, opts: DeleteOptions): Promise<'deleted' | 'pending' | 'gone'>;
  /** JSON merge patch; include metadata.resourceVersion in the patch as the precondition. 'gone': proven not to exist. */
  mergePatch(ref: Ref, patch: Record<string, unknown>, opts: PatchOptions): Promise<KubeObject | 'gone'>;
  create(obj: KubeObject, opts: WriteOptions): Promise<KubeObject>;
}

export interface Kube extends Reader, Writer {
  /** The apiserver's clock (from response Date headers; never ahead of it), for fences and deadlines. */
  serverNow(): Date;
}

export function refOf(obj: KubeObject): Ref {
  const ns = obj.metadata.namespace;
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, ...(ns ? { namespace: ns } : {}) };
}

export function refString(r: Ref): string {
  return `${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}
