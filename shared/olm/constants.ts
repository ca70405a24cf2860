/**
 * OLM v0 names, labels and annotations (../shared/reference/olm-facts.md, "Cross-cutting constants").
 * One place, so every function and test spells them the same way.
 */
export const OLM_GROUP = 'operators.coreos.com';
export const V1ALPHA1 = 'operators.coreos.com/v1alpha1';
export const V1 = 'operators.coreos.com/v1';

export const LABEL_MANAGED = 'olm.managed';
export const LABEL_UNPACK_REF = 'operatorframework.io/bundle-unpack-ref';
export const LABEL_CATALOG_SOURCE = 'olm.catalogSource';
export const LABEL_OWNER = 'olm.owner';
export const LABEL_OWNER_NAMESPACE = 'olm.owner.namespace';
export const LABEL_OWNER_KIND = 'olm.owner.kind';
export const LABEL_COPIED_FROM = 'olm.copiedFrom';
export const COMPONENT_LABEL_PREFIX = 'operators.coreos.com/';

export const ANN_UNPACK_TIMEOUT = 'operatorframework.io/bundle-unpack-timeout';
export const ANN_UNPACK_RETRY = 'operatorframework.io/bundle-unpack-min-retry-interval';
export const ANN_GENERATED_BY = 'olm.generated-by';
export const ANN_OPERATOR_NAMESPACE = 'olm.operatorNamespace';
export const ANN_TARGET_NAMESPACES = 'olm.targetNamespaces';
export const ANN_SOURCE_IMAGE = 'olm.sourceImage';

export const FINALIZER_OLM_CSV_CLEANUP = 'operators.coreos.com/csv-cleanup';

/** olm-medic's own annotations and finalizer. */
export const MEDIC = {
  /** Per-object opt-out: any object (or its namespace-level owner) annotated "true" is never touched. */
  optOut: 'olm-medic.io/ignore',
  /** Written on Subscriptions to make OLM re-resolve at once (olm-facts 1.7). */
  nudge: 'olm-medic.io/nudged-at',
  finalizer: 'olm-medic.io/csv-cleanup',
  /**
   * On an Operator object: "true" is a user's explicit request to clean up its leftovers; "auto" is
   * olm-medic's record of an automatic uninstall (autoUninstall), carried on only while its evidence holds.
   */
  uninstall: 'olm-medic.io/uninstall',
  /**
   * Beside `auto`: the long-Failed CSVs the automatic uninstall was decided on (`<namespace>/<name>`,
   * comma-separated, sorted). A recorded uninstall removes only parts in their namespaces that no other
   * CSV is named owner of; a record without it predates those checks and is taken back.
   */
  uninstallCsvs: 'olm-medic.io/uninstall-csvs',
  /** The runtime's field manager: its writes are on record under it in managedFields. */
  fieldManager: 'olm-medic',
} as const;
