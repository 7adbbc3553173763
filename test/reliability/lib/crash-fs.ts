/**
 * A simulated file system with power loss, behind the JSONL backend's `FsFacade`. Each file keeps
 * a durable image (what `fdatasync` made durable) and the volatile operations since; each
 * directory keeps the entries its last `fsync` made durable. `crash(random)` builds the disk as a
 * power cut could leave it: every file is its durable image plus an in-order prefix of its
 * volatile operations, the last one possibly cut at any byte, and the unsynced region possibly
 * garbled with NUL bytes (pages written back out of order); directory entries added or removed
 * since the directory's last fsync may or may not have survived.
 */
import { dirname } from 'node:path';
import type {
  FsFacade,
  FsFileHandle,
  FsOpenFlags,
  FsStats,
} from '../../../src/store/jsonl/index.js';

type VolatileOp =
  | { readonly kind: 'write'; readonly position: number; readonly bytes: Uint8Array }
  | { readonly kind: 'truncate'; readonly length: number };

interface Inode {
  readonly ino: number;
  data: Uint8Array;
  durable: Uint8Array;
  volatile: VolatileOp[];
  mode: number;
  mtimeMs: number;
}

interface Disk {
  /** Current name → inode (what the running process sees). */
  readonly entries: Map<string, Inode>;
  /** Name → inode as of each directory's last fsync. */
  readonly durableEntries: Map<string, Inode>;
  readonly directories: Set<string>;
}

let inodes = 0;

function errno(code: string, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

function apply(data: Uint8Array, op: VolatileOp): Uint8Array {
  if (op.kind === 'truncate') return data.slice(0, op.length);
  const end = op.position + op.bytes.length;
  const out = new Uint8Array(Math.max(data.length, end));
  out.set(data);
  out.set(op.bytes, op.position);
  return out;
}

let disks = 0;

/**
 * The file system; `stopAfter` freezes it (every later call hangs) to pick the moment of a crash.
 * Every disk is mounted at a root of its own (`/disk-N`), so a store opened on the image after a
 * crash is a new location for anything the process remembers by path.
 */
export class CrashFs implements FsFacade {
  /** The mount point: pass paths under it. */
  readonly root = `/disk-${++disks}`;
  private readonly disk: Disk;
  private operations = 0;
  private stopAt = Number.POSITIVE_INFINITY;
  /** Mutant switch: file `datasync` does nothing (a writer that skips fsync). */
  skipFileSync = false;
  /** Mutant switch: directory `fsync` does nothing (a create that skips the directory fsync). */
  skipDirectorySync = false;
  private stopWaiters: (() => void)[] = [];

  constructor(disk?: Disk) {
    this.disk = disk ?? {
      entries: new Map(),
      durableEntries: new Map(),
      directories: new Set(['/']),
    };
  }

  /** Freezes the file system once `count` more operations have run. */
  stopAfter(count: number): void {
    this.stopAt = this.operations + count;
  }

  /** Resolves when the file system freezes. */
  whenStopped(): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) resolve();
      else this.stopWaiters.push(resolve);
    });
  }

  /** Whether the file system has frozen. */
  get stopped(): boolean {
    return this.operations >= this.stopAt;
  }

  /** The disk a power cut at this moment could leave. */
  crash(random: () => number): CrashFs {
    const survivors = new Map<Inode, Inode>();
    const survive = (inode: Inode): Inode => {
      let copy = survivors.get(inode);
      if (copy === undefined) {
        let data = inode.durable;
        const kept = Math.floor(random() * (inode.volatile.length + 1));
        for (let i = 0; i < kept; i++) data = apply(data, inode.volatile[i] as VolatileOp);
        const cut = inode.volatile[kept];
        if (cut?.kind === 'write' && random() < 0.7) {
          data = apply(data, {
            kind: 'write',
            position: cut.position,
            bytes: cut.bytes.slice(0, Math.floor(random() * cut.bytes.length)),
          });
        }
        if (inode.volatile.length > 0 && random() < 0.25 && data.length > inode.durable.length) {
          // Out-of-order writeback: a later page made it, an earlier one did not.
          const from =
            inode.durable.length + Math.floor(random() * (data.length - inode.durable.length));
          const to = Math.min(data.length, from + 1 + Math.floor(random() * 4096));
          data = data.slice();
          data.fill(0, from, to);
        }
        copy = {
          ino: ++inodes,
          data,
          durable: data,
          volatile: [],
          mode: inode.mode,
          mtimeMs: inode.mtimeMs,
        };
        survivors.set(inode, copy);
      }
      return copy;
    };
    const entries = new Map<string, Inode>();
    const names = new Set([...this.disk.entries.keys(), ...this.disk.durableEntries.keys()]);
    for (const name of names) {
      const current = this.disk.entries.get(name);
      const durable = this.disk.durableEntries.get(name);
      // An entry change not yet made durable by a directory fsync may or may not have survived.
      const chosen = current === durable ? current : random() < 0.5 ? current : durable;
      if (chosen !== undefined) entries.set(name, survive(chosen));
    }
    const next = new CrashFs({
      entries,
      durableEntries: new Map(entries),
      directories: new Set(this.disk.directories),
    });
    next.skipFileSync = this.skipFileSync;
    next.skipDirectorySync = this.skipDirectorySync;
    return next;
  }

  /** Removes files whose name ends with `suffix` (a reboot makes every lock stale). */
  removeAll(suffix: string): void {
    for (const name of [...this.disk.entries.keys()]) {
      if (name.endsWith(suffix)) {
        this.disk.entries.delete(name);
        this.disk.durableEntries.delete(name);
      }
    }
  }

  /** The bytes of a file as the running process sees them. */
  read(path: string): Uint8Array | undefined {
    return this.disk.entries.get(this.local(path))?.data;
  }

  /** The path inside the disk of a path under the mount point. */
  private local(path: string): string {
    if (path !== this.root && !path.startsWith(`${this.root}/`))
      throw errno('ENOENT', `${path} is outside ${this.root}`);
    return path.slice(this.root.length) || '/';
  }

  private async step(): Promise<void> {
    this.operations++;
    if (this.operations >= this.stopAt) {
      for (const wake of this.stopWaiters.splice(0)) wake();
      await new Promise<never>(() => {});
    }
  }

  async open(path: string, flags: FsOpenFlags, mode = 0o666): Promise<FsFileHandle> {
    await this.step();
    path = this.local(path);
    if (this.disk.directories.has(path)) return new CrashDirectoryHandle(this, path);
    let inode = this.disk.entries.get(path);
    if (flags === 'wx') {
      if (inode !== undefined) throw errno('EEXIST', path);
      if (!this.disk.directories.has(dirname(path))) throw errno('ENOENT', path);
      inode = {
        ino: ++inodes,
        data: new Uint8Array(),
        durable: new Uint8Array(),
        volatile: [],
        mode: 0o100000 | mode,
        mtimeMs: Date.now(),
      };
      this.disk.entries.set(path, inode);
    } else if (inode === undefined) {
      throw errno('ENOENT', path);
    }
    return new CrashFileHandle(this, inode);
  }

  async link(existingPath: string, newPath: string): Promise<void> {
    await this.step();
    existingPath = this.local(existingPath);
    newPath = this.local(newPath);
    const inode = this.disk.entries.get(existingPath);
    if (inode === undefined) throw errno('ENOENT', existingPath);
    if (this.disk.entries.has(newPath)) throw errno('EEXIST', newPath);
    this.disk.entries.set(newPath, inode);
  }

  async unlink(path: string): Promise<void> {
    await this.step();
    path = this.local(path);
    if (!this.disk.entries.delete(path)) throw errno('ENOENT', path);
  }

  async rename(oldPath: string, newPath: string): Promise<void> {
    await this.step();
    oldPath = this.local(oldPath);
    newPath = this.local(newPath);
    const inode = this.disk.entries.get(oldPath);
    if (inode === undefined) throw errno('ENOENT', oldPath);
    this.disk.entries.delete(oldPath);
    this.disk.entries.set(newPath, inode);
  }

  async mkdir(path: string, _mode: number): Promise<void> {
    await this.step();
    path = this.local(path);
    for (let dir = path; dir !== dirname(dir); dir = dirname(dir)) this.disk.directories.add(dir);
  }

  async readdir(path: string): Promise<string[]> {
    await this.step();
    path = this.local(path);
    if (!this.disk.directories.has(path)) throw errno('ENOENT', path);
    return [...this.disk.entries.keys()]
      .filter((name) => dirname(name) === path)
      .map((name) => name.slice(path.length + 1));
  }

  async stat(path: string): Promise<FsStats> {
    await this.step();
    path = this.local(path);
    if (this.disk.directories.has(path)) return directoryStats(`${this.root}${path}`);
    const inode = this.disk.entries.get(path);
    if (inode === undefined) throw errno('ENOENT', path);
    return fileStats(inode);
  }

  /** @internal */
  async handleStep(): Promise<void> {
    await this.step();
  }

  /** @internal makes the entries of `directory` durable. */
  syncDirectory(directory: string): void {
    if (this.skipDirectorySync) return;
    for (const name of [...this.disk.durableEntries.keys()]) {
      if (dirname(name) === directory && !this.disk.entries.has(name))
        this.disk.durableEntries.delete(name);
    }
    for (const [name, inode] of this.disk.entries) {
      if (dirname(name) === directory) this.disk.durableEntries.set(name, inode);
    }
  }
}

function fileStats(inode: Inode): FsStats {
  return {
    size: inode.data.length,
    mtimeMs: inode.mtimeMs,
    dev: 1,
    ino: inode.ino,
    mode: inode.mode,
    isFile: () => true,
    isDirectory: () => false,
  };
}

const directoryInodes = new Map<string, number>();

/** Stats of a directory; its inode is unique per disk and path, as a real file system's is. */
function directoryStats(key: string): FsStats {
  let ino = directoryInodes.get(key);
  if (ino === undefined) {
    ino = ++inodes;
    directoryInodes.set(key, ino);
  }
  return {
    size: 0,
    mtimeMs: 0,
    dev: 1,
    ino,
    mode: 0o40700,
    isFile: () => false,
    isDirectory: () => true,
  };
}

class CrashFileHandle implements FsFileHandle {
  constructor(
    private readonly fs: CrashFs,
    private readonly inode: Inode,
  ) {}

  async read(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<number> {
    await this.fs.handleStep();
    const bytes = this.inode.data.subarray(position, position + length);
    buffer.set(bytes, offset);
    return bytes.length;
  }

  async write(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<number> {
    await this.fs.handleStep();
    const bytes = buffer.slice(offset, offset + length);
    const op: VolatileOp = { kind: 'write', position, bytes };
    this.inode.data = apply(this.inode.data, op);
    this.inode.volatile.push(op);
    this.inode.mtimeMs = Date.now();
    return length;
  }

  async stat(): Promise<FsStats> {
    await this.fs.handleStep();
    return fileStats(this.inode);
  }

  async truncate(length: number): Promise<void> {
    await this.fs.handleStep();
    const op: VolatileOp = { kind: 'truncate', length };
    this.inode.data = apply(this.inode.data, op);
    this.inode.volatile.push(op);
  }

  async datasync(): Promise<void> {
    await this.fs.handleStep();
    if (this.fs.skipFileSync) return;
    this.inode.durable = this.inode.data;
    this.inode.volatile = [];
  }

  async sync(): Promise<void> {
    await this.datasync();
  }

  async chmod(mode: number): Promise<void> {
    await this.fs.handleStep();
    this.inode.mode = (this.inode.mode & ~0o777) | mode;
  }

  async close(): Promise<void> {
    await this.fs.handleStep();
  }
}

class CrashDirectoryHandle implements FsFileHandle {
  constructor(
    private readonly fs: CrashFs,
    private readonly path: string,
  ) {}

  async read(): Promise<number> {
    throw errno('EISDIR', this.path);
  }
  async write(): Promise<number> {
    throw errno('EISDIR', this.path);
  }
  async stat(): Promise<FsStats> {
    await this.fs.handleStep();
    return directoryStats(`${this.fs.root}${this.path}`);
  }
  async truncate(): Promise<void> {
    throw errno('EISDIR', this.path);
  }
  async datasync(): Promise<void> {
    await this.sync();
  }
  async sync(): Promise<void> {
    await this.fs.handleStep();
    this.fs.syncDirectory(this.path);
  }
  async chmod(): Promise<void> {
    await this.fs.handleStep();
  }
  async close(): Promise<void> {
    await this.fs.handleStep();
  }
}
