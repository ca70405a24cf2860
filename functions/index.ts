/** The registry of remediation functions served by this image. */
import type { AnyFunction } from '../shared/core/types.js';
import { catalogReschedule } from './catalog-reschedule/index.js';
import { finalizerCleanup } from './finalizer-cleanup/index.js';
import { jobConflict } from './job-conflict/index.js';
import { ownerrefRepair } from './ownerref-repair/index.js';

export const allFunctions: AnyFunction[] = [jobConflict, ownerrefRepair, catalogReschedule, finalizerCleanup];
