/**
 * Composition root of the production server (`npm start` runs its bundle, dist/server.mjs):
 * the one place that joins the library (shared/) with the remediation functions (functions/).
 */
import { serve } from '../shared/http/serve.js';
import { allFunctions } from '../functions/index.js';

serve(allFunctions);
