/**
 * The base of the private-brand idiom: a class whose constructor returns the object it is given,
 * so that a subclass's private fields are defined on that object. `#field in value` is then an
 * unforgeable O(1) test of "this object was marked here", with no table to keep (a WeakSet costs
 * a hash insert per object and ephemeron work in every GC).
 */
export class Stamp {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the private-brand idiom needs it
    return target;
  }
}
