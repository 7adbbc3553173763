/** Waiting on a child process of a test until it says it is ready. */
import type { ChildProcess } from 'node:child_process';

/**
 * Resolves with the child's stdout so far once it contains `marker`; rejects if the child exits
 * first (with what it printed, to show why). The child must be spawned with stdout piped.
 */
export function untilOutput(child: ChildProcess, marker: string): Promise<string> {
  let output = '';
  child.stdout?.setEncoding('utf8');
  return new Promise<string>((resolve, reject) => {
    const exited = (code: number | null): void =>
      reject(new Error(`child exited with ${code} before '${marker}': ${output}`));
    child.once('exit', exited);
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
      if (output.includes(marker)) {
        child.off('exit', exited);
        resolve(output);
      }
    });
  });
}
