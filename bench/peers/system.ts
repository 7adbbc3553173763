/**
 * What the side-by-side benchmark drives: a system (palimpsest on one backend, a peer, or a
 * floor) that records sessions of the shared conversation, and can resume one in a fresh process.
 */

/** How far an acknowledged turn survives. */
export type DurabilityClass = 'memory' | 'non-durable' | 'durable';

/** One session being recorded. */
export interface SessionRecorder {
  /** Untimed work before a turn (building the turn's data, where a floor needs it prebuilt). */
  prepareTurn?(): void;
  /** Records the next turn of the conversation; resolves once the system acknowledges it. */
  appendTurn(): Promise<void>;
  /** Builds what the next model request would send; resolves to its message count. */
  derive?(): Promise<number>;
  close(): Promise<void>;
}

/** A store of sessions under one directory (or schema). */
export interface SystemStore {
  openSession(id: string): Promise<SessionRecorder>;
  /** Bytes the store holds, once closed (files, or a schema's relations). */
  bytes?(): Promise<number>;
  close(): Promise<void>;
}

/** A resumed session: the messages its next request would send, and how to let it go. */
export interface Resumed {
  readonly messages: number;
  close(): Promise<void>;
}

/** A resume, imported and set up: calling it does the measured work (open, rebuild, derive). */
export type PreparedResume = () => Promise<Resumed>;

export interface BenchSystem {
  readonly name: string;
  readonly role: 'palimpsest' | 'peer' | 'floor';
  readonly durability: DurabilityClass;
  /** Records kept per turn (204 for palimpsest, 3 for a peer). */
  readonly recordsPerTurn: number;
  /** The most turns a run may have (a peer whose per-turn cost grows with the session). */
  readonly maxTurns?: number;
  /** The most turns each of the concurrent sessions may have. */
  readonly maxConcurrentTurns?: number;
  open(dir: string): Promise<SystemStore>;
}

/** A way to resume a session another system wrote (a floor reads palimpsest's files). */
export interface ResumeTarget {
  readonly name: string;
  /** The system whose recorded directory it reads. */
  readonly from: string;
  readonly role: 'palimpsest' | 'peer' | 'floor';
  prepare(dir: string, id: string): Promise<PreparedResume>;
}
