/** Small helpers shared by the parts of the contract suite. */

/** Awaits a promise that must reject and returns the reason. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
