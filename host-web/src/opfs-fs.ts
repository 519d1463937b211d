// wasi:filesystem for one flat OPFS directory, durable before every answer.
//
// OPFS splits its API in two: reading, writing, truncating and flushing an
// open `FileSystemSyncAccessHandle` are synchronous (dedicated Workers only);
// creating, renaming, removing and listing entries are asynchronous. The
// engine's calls into wasi:filesystem are synchronous, so:
//
// - `attach()` (async, before an engine call) lists the directory and opens
//   a sync access handle on every file;
// - during the call, reads and writes of those files go straight to their
//   handles; a file the call creates lives in a buffer; creates, renames and
//   removes change the in-memory directory view at once and are queued;
// - `drain()` (async, after the call, before the caller hears the answer)
//   applies the queue in order: creates the files, writes their bytes,
//   renames, removes, and flushes every handle written;
// - `detach()` closes the handles so another tab's Worker can open them
//   (a sync access handle locks its file); callers hold a Web Lock from
//   `attach` to `detach`.
//
// Order: once a namespace change is queued, a later write to a file that is
// already in OPFS is not applied at once (that would overtake the queue): the
// file is copied into a buffer and written back at that point of the queue.
// So at every moment of a drain, OPFS holds the call's namespace operations
// up to some point, in the call's order, and each file the drain has reached
// holds its bytes as the call left them. A crash mid-drain therefore leaves
// what a power cut leaves natively between two of the engine's steps (a
// snapshot is renamed into place only after its bytes; nothing is answered
// before the whole drain), which the recovery rule of docs/format.md handles.
// test/fs-oracle.worker.ts checks the adapter against a naive model.
//
// The directory is flat: the engine keeps one directory of files. `.` is the
// directory itself; `mkdir(".")` answers `exist` so Rust's `create_dir_all`
// accepts the granted directory; subdirectories, links and `..` are refused.

import { inputStreamCreate, outputStreamCreate } from "@bytecodealliance/preview2-shim/io";

/** The synchronous half of OPFS (dedicated Workers). */
export interface SyncAccessHandle {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

interface OpfsFileHandle extends FileSystemFileHandle {
  createSyncAccessHandle(): Promise<SyncAccessHandle>;
  move(newName: string): Promise<void>;
}

/** One file of the directory view. */
class FileNode {
  /** The OPFS file (missing until a queued create has run). */
  handle?: OpfsFileHandle;
  /** Open while attached, for files that exist in OPFS. */
  access?: SyncAccessHandle;
  /** The file's bytes while they are not (yet) in OPFS, `len` of them valid. */
  buffer?: Uint8Array;
  len = 0;
  /** Written through `access` since the last flush. */
  dirty = false;
  /** Still part of the directory (not removed or replaced). */
  linked = true;
  readonly id: bigint;

  constructor(id: bigint) {
    this.id = id;
  }

  size(): number {
    return this.buffer ? this.len : this.access!.getSize();
  }

  read(length: number, offset: number): Uint8Array {
    const size = this.size();
    const end = Math.min(size, offset + length);
    if (offset >= end) return new Uint8Array(0);
    if (this.buffer) return this.buffer.subarray(offset, end); // copied by the bindings
    const out = new Uint8Array(end - offset);
    let done = 0;
    while (done < out.length) {
      const n = this.access!.read(out.subarray(done), { at: offset + done });
      if (n <= 0) break;
      done += n;
    }
    return done === out.length ? out : out.slice(0, done);
  }

  write(data: Uint8Array, offset: number): void {
    if (this.buffer) {
      this.reserve(offset + data.length);
      this.buffer.set(data, offset);
      this.len = Math.max(this.len, offset + data.length);
      return;
    }
    let done = 0;
    while (done < data.length) {
      const n = this.access!.write(data.subarray(done), { at: offset + done });
      if (n <= 0) throw "io";
      done += n;
    }
    this.dirty = true;
  }

  setSize(size: number): void {
    if (this.buffer) {
      this.reserve(size);
      if (size < this.len) this.buffer.fill(0, size, this.len);
      this.len = size;
      return;
    }
    this.access!.truncate(size);
    this.dirty = true;
  }

  /** Moves the bytes of an attached file into a buffer (see "Order" above). */
  toBuffer(): void {
    if (this.buffer) return;
    const bytes = this.read(this.size(), 0);
    this.buffer = new Uint8Array(Math.max(bytes.length, 4096));
    this.buffer.set(bytes);
    this.len = bytes.length;
  }

  private reserve(size: number): void {
    const buffer = this.buffer!;
    if (size <= buffer.length) return;
    const grown = new Uint8Array(Math.max(size, buffer.length * 2));
    grown.set(buffer.subarray(0, this.len));
    this.buffer = grown;
  }
}

type Op =
  | { op: "write-back"; node: FileNode; name: string }
  | { op: "rename"; node: FileNode; from: string; to: string; replaced?: FileNode }
  | { op: "remove"; node: FileNode; name: string };

/** Counters a benchmark or test can read. */
export interface FsCounters {
  attaches: number;
  drains: number;
  queued: number;
  handleOpens: number;
}

/** The directory: what the Worker attaches, drains and detaches around each call. */
export class OpfsDirectory {
  readonly dir: FileSystemDirectoryHandle;
  readonly readOnly: boolean;
  private files = new Map<string, FileNode>();
  /** Every node with an open sync access handle, linked or not: `detach` closes them all. */
  private handles = new Set<FileNode>();
  private queue: Op[] = [];
  private attached = false;
  private nextId = 1n;
  readonly counters: FsCounters = { attaches: 0, drains: 0, queued: 0, handleOpens: 0 };

  constructor(dir: FileSystemDirectoryHandle, readOnly = false) {
    this.dir = dir;
    this.readOnly = readOnly;
  }

  /** Lists the directory and opens a sync access handle on every file. */
  async attach(): Promise<void> {
    if (this.attached) return;
    this.counters.attaches++;
    this.files.clear();
    try {
      for await (const [name, entry] of (this.dir as any).entries() as AsyncIterable<[string, FileSystemHandle]>) {
        if (entry.kind !== "file") continue;
        const node = new FileNode(this.nextId++);
        node.handle = entry as OpfsFileHandle;
        this.files.set(name, node);
        await this.openHandle(node);
      }
    } catch (e) {
      this.detach();
      throw e;
    }
    this.attached = true;
  }

  /**
   * A read-only directory whose files are bytes already in memory (the
   * embedding model, read from OPFS or the network by the Worker).
   */
  attachBuffers(files: Map<string, Uint8Array>): void {
    if (!this.readOnly) throw new Error("attachBuffers: only for a read-only directory");
    this.files.clear();
    for (const [name, bytes] of files) {
      const node = new FileNode(this.nextId++);
      node.buffer = bytes;
      node.len = bytes.length;
      this.files.set(name, node);
    }
    this.attached = true;
  }

  /** Applies the queued operations in order and flushes every written file. */
  async drain(): Promise<void> {
    this.counters.drains++;
    const queue = this.queue;
    this.queue = [];
    for (const item of queue) {
      const node = item.node;
      switch (item.op) {
        case "write-back": {
          if (!node.handle) {
            node.handle = (await this.dir.getFileHandle(item.name, { create: true })) as OpfsFileHandle;
          }
          const access = node.access ?? (await this.openHandle(node));
          if (node.buffer) {
            const bytes = node.buffer.subarray(0, node.len);
            access.truncate(bytes.length);
            let done = 0;
            while (done < bytes.length) {
              done += access.write(bytes.subarray(done), { at: done });
            }
            node.buffer = undefined;
            node.len = 0;
          }
          access.flush();
          node.dirty = false;
          break;
        }
        case "rename": {
          // A moved file must not be open; an existing target is replaced.
          node.access?.flush();
          this.closeHandle(node);
          if (item.replaced) this.closeHandle(item.replaced);
          await this.removeEntry(item.to);
          await node.handle!.move(item.to);
          if (node.linked && !node.buffer) await this.openHandle(node);
          break;
        }
        case "remove": {
          this.closeHandle(node);
          if (node.handle) await this.removeEntry(item.name);
          break;
        }
      }
    }
    for (const node of this.files.values()) {
      if (node.dirty && node.access) {
        node.access.flush();
        node.dirty = false;
      }
    }
  }

  /** Closes every handle (also of files a failed drain left behind); the next call attaches again. */
  detach(): void {
    for (const node of [...this.handles]) this.closeHandle(node);
    this.files.clear();
    this.queue = [];
    this.attached = false;
  }

  private async openHandle(node: FileNode): Promise<SyncAccessHandle> {
    const access = await node.handle!.createSyncAccessHandle();
    node.access = access;
    this.handles.add(node);
    this.counters.handleOpens++;
    return access;
  }

  private closeHandle(node: FileNode): void {
    node.access?.close();
    node.access = undefined;
    this.handles.delete(node);
  }

  private async removeEntry(name: string): Promise<void> {
    try {
      await this.dir.removeEntry(name);
    } catch (e) {
      if ((e as DOMException)?.name !== "NotFoundError") throw e;
    }
  }

  // ---- the synchronous side, used by the descriptors during a call ----

  private enqueue(op: Op): void {
    this.queue.push(op);
    this.counters.queued++;
  }

  checkAttached(): void {
    if (!this.attached) throw "bad-descriptor";
  }

  names(): string[] {
    this.checkAttached();
    return [...this.files.keys()];
  }

  lookup(name: string): FileNode | undefined {
    this.checkAttached();
    return this.files.get(name);
  }

  create(name: string): FileNode {
    this.checkAttached();
    if (this.readOnly) throw "read-only";
    const node = new FileNode(this.nextId++);
    node.buffer = new Uint8Array(4096);
    this.files.set(name, node);
    this.enqueue({ op: "write-back", node, name });
    return node;
  }

  /** Call before changing a file's bytes. */
  beforeWrite(node: FileNode): void {
    this.checkAttached();
    if (this.readOnly) throw "read-only";
    if (node.buffer || this.queue.length === 0) return;
    node.toBuffer();
    this.enqueue({ op: "write-back", node, name: this.nameOf(node) });
  }

  /** fsync: bytes of a file in OPFS are flushed now; buffered ones at drain. */
  sync(node: FileNode): void {
    this.checkAttached();
    if (!node.buffer && node.access && node.dirty) {
      node.access.flush();
      node.dirty = false;
    }
  }

  rename(from: string, to: string): void {
    this.checkAttached();
    if (this.readOnly) throw "read-only";
    const node = this.files.get(from);
    if (!node) throw "no-entry";
    if (from === to) return;
    const replaced = this.files.get(to);
    if (replaced) replaced.linked = false;
    this.files.delete(from);
    this.files.set(to, node);
    // A file still waiting for its create is created under the old name
    // first; the rename then moves it, as the engine asked.
    this.enqueue({ op: "rename", node, from, to, replaced });
  }

  remove(name: string): void {
    this.checkAttached();
    if (this.readOnly) throw "read-only";
    const node = this.files.get(name);
    if (!node) throw "no-entry";
    node.linked = false;
    this.files.delete(name);
    this.enqueue({ op: "remove", node, name });
  }

  private nameOf(node: FileNode): string {
    for (const [name, n] of this.files) if (n === node) return name;
    throw "no-entry";
  }
}

// ---- wasi:filesystem descriptors (the preview2-shim adapter interface) ----

const timeZero = { seconds: 0n, nanoseconds: 0 };

function fileName(path: string): string {
  if (path === "" || path.includes("/") || path === ".." || path.includes("\0")) {
    throw path.includes("/") ? "not-permitted" : "invalid";
  }
  return path;
}

function isSelf(path: string): boolean {
  return path === "." || path === "" || path === "./";
}

/** The directory's descriptor. */
class DirDescriptor {
  constructor(readonly fs: OpfsDirectory) {}

  getType() {
    return "directory";
  }
  getFlags() {
    return { read: true, mutateDirectory: !this.fs.readOnly };
  }
  stat() {
    return {
      type: "directory",
      linkCount: 1n,
      size: 0n,
      dataAccessTimestamp: timeZero,
      dataModificationTimestamp: timeZero,
      statusChangeTimestamp: timeZero,
    };
  }
  statAt(_pathFlags: unknown, path: string) {
    if (isSelf(path)) return this.stat();
    const node = this.fs.lookup(fileName(path));
    if (!node) throw "no-entry";
    return fileStat(node);
  }
  metadataHash() {
    return { lower: 0n, upper: 1n };
  }
  metadataHashAt(_pathFlags: unknown, path: string) {
    if (isSelf(path)) return this.metadataHash();
    const node = this.fs.lookup(fileName(path));
    if (!node) throw "no-entry";
    return { lower: node.id, upper: 0n };
  }
  openAt(
    _pathFlags: unknown,
    path: string,
    openFlags: { create?: boolean; directory?: boolean; exclusive?: boolean; truncate?: boolean },
    flags: { read?: boolean; write?: boolean },
  ) {
    if (isSelf(path)) {
      if (openFlags.create && openFlags.exclusive) throw "exist";
      return this;
    }
    const name = fileName(path);
    let node = this.fs.lookup(name);
    if (openFlags.directory) throw node ? "not-directory" : "no-entry";
    if (node) {
      if (openFlags.create && openFlags.exclusive) throw "exist";
    } else {
      if (!openFlags.create) throw "no-entry";
      node = this.fs.create(name);
    }
    const writable = !!flags.write;
    if (writable && this.fs.readOnly) throw "read-only";
    const file = new FileDescriptor(this.fs, node, writable);
    if (openFlags.truncate) file.setSize(0n);
    return file;
  }
  readDirectory() {
    const names = this.fs.names().sort();
    let i = 0;
    return {
      readDirectoryEntry: () => (i < names.length ? { type: "regular-file", name: names[i++] } : undefined),
    };
  }
  createDirectoryAt(path: string) {
    if (isSelf(path)) throw "exist";
    const name = fileName(path);
    throw this.fs.lookup(name) ? "exist" : "unsupported";
  }
  removeDirectoryAt(path: string) {
    throw isSelf(path) ? "invalid" : this.fs.lookup(fileName(path)) ? "not-directory" : "no-entry";
  }
  unlinkFileAt(path: string) {
    if (isSelf(path)) throw "is-directory";
    this.fs.remove(fileName(path));
  }
  renameAt(oldPath: string, newDescriptor: unknown, newPath: string) {
    if (newDescriptor !== this) throw "cross-device";
    this.fs.rename(fileName(oldPath), fileName(newPath));
  }
  sync() {
    this.fs.checkAttached();
  }
  syncData() {
    this.fs.checkAttached();
  }
  isSameObject(other: unknown) {
    return other === this;
  }
  advise() {}
  read(): never {
    throw "is-directory";
  }
  write(): never {
    throw "is-directory";
  }
  setSize(): never {
    throw "is-directory";
  }
  readViaStream(): never {
    throw "is-directory";
  }
  writeViaStream(): never {
    throw "is-directory";
  }
  appendViaStream(): never {
    throw "is-directory";
  }
  setTimes() {}
  setTimesAt() {}
  linkAt(): never {
    throw "unsupported";
  }
  symlinkAt(): never {
    throw "unsupported";
  }
  readlinkAt(): never {
    throw "invalid";
  }
}

function fileStat(node: FileNode) {
  return {
    type: "regular-file",
    linkCount: node.linked ? 1n : 0n,
    size: BigInt(node.size()),
    dataAccessTimestamp: timeZero,
    dataModificationTimestamp: timeZero,
    statusChangeTimestamp: timeZero,
  };
}

function toOffset(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw "file-too-large";
  return Number(value);
}

/** An open file. */
class FileDescriptor {
  constructor(
    readonly fs: OpfsDirectory,
    readonly node: FileNode,
    readonly writable: boolean,
  ) {}

  private changing(): void {
    if (!this.writable) throw "bad-descriptor";
    if (!this.node.linked) {
      // Written after its unlink: bytes no one can reach again.
      this.node.toBuffer();
      return;
    }
    this.fs.beforeWrite(this.node);
  }

  getType() {
    return "regular-file";
  }
  getFlags() {
    return { read: true, write: this.writable };
  }
  stat() {
    this.fs.checkAttached();
    return fileStat(this.node);
  }
  metadataHash() {
    return { lower: this.node.id, upper: 0n };
  }
  read(length: bigint, offset: bigint): [Uint8Array, boolean] {
    this.fs.checkAttached();
    const at = toOffset(offset);
    const bytes = this.node.read(Math.min(toOffset(length), 1 << 26), at);
    return [bytes, at + bytes.length >= this.node.size()];
  }
  write(buffer: Uint8Array, offset: bigint): bigint {
    this.changing();
    this.node.write(buffer, toOffset(offset));
    return BigInt(buffer.length);
  }
  setSize(size: bigint) {
    this.changing();
    this.node.setSize(toOffset(size));
  }
  sync() {
    this.fs.sync(this.node);
  }
  syncData() {
    this.fs.sync(this.node);
  }
  readViaStream(offset: bigint) {
    let at = toOffset(offset);
    const read = (len: bigint) => {
      this.fs.checkAttached();
      const bytes = this.node.read(Math.min(Number(len), 1 << 20), at);
      if (bytes.length === 0 && Number(len) > 0) throw { tag: "closed" };
      at += bytes.length;
      return bytes;
    };
    return inputStreamCreate({ read, blockingRead: read });
  }
  writeViaStream(offset: bigint) {
    let at = toOffset(offset);
    return outputStreamCreate({
      checkWrite: () => 1n << 20n,
      write: (buf: Uint8Array) => {
        this.changing();
        this.node.write(buf, at);
        at += buf.length;
      },
      blockingFlush: () => {},
      flush: () => {},
    });
  }
  appendViaStream() {
    return outputStreamCreate({
      checkWrite: () => 1n << 20n,
      write: (buf: Uint8Array) => {
        this.changing();
        this.node.write(buf, this.node.size());
      },
      blockingFlush: () => {},
      flush: () => {},
    });
  }
  isSameObject(other: unknown) {
    return other instanceof FileDescriptor && other.node === this.node;
  }
  advise() {}
  setTimes() {}
  readDirectory(): never {
    throw "not-directory";
  }
  openAt(): never {
    throw "not-directory";
  }
  statAt(): never {
    throw "not-directory";
  }
  metadataHashAt(): never {
    throw "not-directory";
  }
  createDirectoryAt(): never {
    throw "not-directory";
  }
  removeDirectoryAt(): never {
    throw "not-directory";
  }
  unlinkFileAt(): never {
    throw "not-directory";
  }
  renameAt(): never {
    throw "not-directory";
  }
  linkAt(): never {
    throw "not-directory";
  }
  symlinkAt(): never {
    throw "not-directory";
  }
  readlinkAt(): never {
    throw "not-directory";
  }
  setTimesAt(): never {
    throw "not-directory";
  }
}

/** The preview2-shim `BrowserFilesystemAdapter`: capability = an attached OpfsDirectory. */
export const opfsAdapter = {
  getRoot(dir: OpfsDirectory) {
    return new DirDescriptor(dir) as any;
  },
};
