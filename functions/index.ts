/** The registry of remediation functions served by this image. */
import type { AnyFunction } from '../shared/core/types.js';

export const allFunctions: AnyFunction[] = [];
