/** package.json's `start` script: its environment assignments, and the arguments after `node`. */
export function startCommand(root: string): { env: Record<string, string>; args: string[] };
