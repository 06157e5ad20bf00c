import type { CadreEvent } from '../core/events.ts';
import type { RunMessage, TreeSteering } from '../core/tree-record.ts';

/** One tree's place among the live trees, from before its first event until it is stored. */
export interface TreeSlot {
  signal: AbortSignal;
  observe: (event: CadreEvent) => void;
  cancel: (reason: string) => void;
  /**
   * The tree answers question `question` (its stored id, when known) in this session of its user, as the
   * answer `answerId`: deleting the session, or replacing the question, stops it (cancelSession), and a
   * page opening the session finds it (answerIn).
   */
  inSession: (sessionId: string, question?: string, answerId?: string) => void;
  /**
   * How one run of the tree is stopped alone in this process (its record's steering), for `stopRun`; a
   * tree run elsewhere (a job) has none here, and is stopped through the store.
   */
  steer: (steering: TreeSteering) => void;
  /**
   * The tree waits on the queue for a worker under root id `rootRunId` (runs as jobs): until its root
   * starts, `cancel` of that id here stops it (its asker withdraws it from the queue).
   */
  waitsAs: (rootRunId: string) => void;
  end: () => void;
}

/** A listener following one live tree; `index` is the event's position in its tree (from 0). */
export type TreeListener = (event: CadreEvent, index: number) => void;

/** One run tree executing in this process, for the user it acts for. */
export interface LiveTree {
  readonly rootRunId: string;
  readonly userId: string;
  /** Every event of the tree so far, in the order it happened. */
  readonly events: readonly CadreEvent[];
  readonly ended: boolean;
  /** Resolves when the tree has ended and its events are stored. */
  readonly done: Promise<void>;
}

interface TreeEntry extends LiveTree {
  controller: AbortController;
  steering?: TreeSteering | undefined;
  events: CadreEvent[];
  listeners: Set<TreeListener>;
  enders: Set<() => void>;
  ended: boolean;
  finish: () => void;
}

/**
 * The run trees executing in this process: who they act for, how to stop them, and their events so far, so
 * a client that reconnects can catch up and follow. A tree stays here until its events are stored; after
 * that the store answers. Memory is what the live trees did, never more.
 */
export class LiveRuns {
  #trees = new Map<string, TreeEntry>();
  /** Any run id of a live tree → its root's id (children included, so a child id finds its tree). */
  #rootOf = new Map<string, string>();
  #pending = new Map<AbortController, { userId: string }>();
  /** The session (and question) each running answer is for, so deleting the session stops it. */
  #sessions = new Map<
    AbortController,
    {
      userId: string;
      sessionId: string;
      question: string | undefined;
      answerId: string | undefined;
      ended: Promise<void>;
    }
  >();
  /** Trees waiting on the queue for a worker, by the root id they will have: who asked, how to stop them. */
  #waiting = new Map<string, { userId: string; controller: AbortController }>();
  /** Per user and session, the end of the last turn queued by `inTurn`. */
  #turns = new Map<string, Promise<void>>();

  /**
   * Registers a tree about to start for `userId`; returns the signal to run it with and `observe`, which
   * must see every event of the tree, and `end`, called once the tree's events are stored.
   */
  begin(userId: string): TreeSlot {
    const controller = new AbortController();
    this.#pending.set(controller, { userId });
    let markEnded = () => {};
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    let entry: TreeEntry | undefined;
    let steering: TreeSteering | undefined;
    let waitingAs: string | undefined;
    const observe = (event: CadreEvent) => {
      if (!entry) {
        if (event.type !== 'run-start' || event.parentRunId !== null) return;
        if (waitingAs) this.#waiting.delete(waitingAs);
        entry = this.#open(event.runId, userId, controller);
        entry.steering = steering;
        this.#pending.delete(controller);
      }
      if (event.type === 'run-start') this.#rootOf.set(event.runId, entry.rootRunId);
      const index = entry.events.push(event) - 1;
      for (const listener of entry.listeners) {
        try {
          listener(event, index);
        } catch {
          // A follower that fails (a closed socket) must not break the tree or other followers.
        }
      }
    };
    const end = () => {
      if (waitingAs) this.#waiting.delete(waitingAs);
      this.#pending.delete(controller);
      this.#sessions.delete(controller);
      if (entry) this.#close(entry);
      markEnded();
    };
    const cancel = (reason: string) => controller.abort(new Error(reason));
    const inSession = (sessionId: string, question?: string, answerId?: string) =>
      this.#sessions.set(controller, { userId, sessionId, question, answerId, ended });
    const steer = (given: TreeSteering) => {
      steering = given;
      if (entry) entry.steering = given;
    };
    const waitsAs = (rootRunId: string) => {
      if (entry) return;
      waitingAs = rootRunId;
      this.#waiting.set(rootRunId, { userId, controller });
    };
    return { signal: controller.signal, observe, cancel, inSession, steer, waitsAs, end };
  }

  #open(rootRunId: string, userId: string, controller: AbortController): TreeEntry {
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const entry: TreeEntry = {
      rootRunId,
      userId,
      controller,
      events: [],
      listeners: new Set(),
      enders: new Set(),
      ended: false,
      done,
      finish,
    };
    this.#trees.set(rootRunId, entry);
    return entry;
  }

  #close(entry: TreeEntry): void {
    entry.ended = true;
    this.#trees.delete(entry.rootRunId);
    for (const event of entry.events) if (event.type === 'run-start') this.#rootOf.delete(event.runId);
    for (const ender of entry.enders) ender();
    entry.listeners.clear();
    entry.enders.clear();
    entry.finish();
  }

  /** The live tree holding `runId` (root or child), if it belongs to `userId`. */
  get(userId: string, runId: string): LiveTree | undefined {
    const root = this.#rootOf.get(runId);
    const entry = root ? this.#trees.get(root) : undefined;
    return entry && entry.userId === userId ? entry : undefined;
  }

  /**
   * Stops the tree holding `runId` (or waiting on the queue to start as root `runId`, see `waitsAs`); false
   * when no live tree of `userId` holds it.
   */
  cancel(userId: string, runId: string, reason = 'stopped by the person'): boolean {
    const root = this.#rootOf.get(runId);
    const entry = root ? this.#trees.get(root) : undefined;
    const controller =
      entry?.userId === userId
        ? entry.controller
        : this.#waiting.get(runId)?.userId === userId
          ? this.#waiting.get(runId)?.controller
          : undefined;
    if (!controller) return false;
    controller.abort(new Error(reason));
    return true;
  }

  /**
   * Stops run `runId` of a live tree alone, with its subtree (its parent goes on with what it had), when
   * the tree runs in this process: true when it did. A tree's root is stopped with `cancel`.
   */
  stopRun(userId: string | undefined, runId: string, reason = 'stopped by the person'): boolean {
    const root = this.#rootOf.get(runId);
    const entry = root ? this.#trees.get(root) : undefined;
    if (!entry || (userId !== undefined && entry.userId !== userId) || root === runId) return false;
    return entry.steering?.stopRun(runId, reason) ?? false;
  }

  /**
   * Hands run `runId` of a live tree a person's message, when the tree runs in this process: true when
   * it did (the run joins it at its next model step).
   */
  sendMessage(userId: string | undefined, runId: string, message: RunMessage): boolean {
    const root = this.#rootOf.get(runId);
    const entry = root ? this.#trees.get(root) : undefined;
    if (!entry || (userId !== undefined && entry.userId !== userId)) return false;
    return entry.steering?.sendMessage(runId, message) ?? false;
  }

  /** The id of every run of the live trees (roots and the runs in them). */
  runIds(): string[] {
    return [...this.#rootOf.keys()];
  }

  /** Whether `runId` is a live tree's root. */
  isRoot(runId: string): boolean {
    return this.#trees.has(runId);
  }

  /**
   * Stops every tree answering in `userId`'s session `sessionId` (with `questions`, only those answering
   * one of them, or a question not known): how many were running, and a promise of their ends (each
   * answer stored, or dropped with its session).
   */
  cancelSession(
    userId: string,
    sessionId: string,
    reason: string,
    questions?: ReadonlySet<string>,
  ): { stopped: number; ended: Promise<void> } {
    const ends: Promise<void>[] = [];
    for (const [controller, owner] of this.#sessions) {
      if (owner.userId !== userId || owner.sessionId !== sessionId) continue;
      if (questions && owner.question !== undefined && !questions.has(owner.question)) continue;
      controller.abort(new Error(reason));
      ends.push(owner.ended);
    }
    return { stopped: ends.length, ended: Promise.all(ends).then(() => {}) };
  }

  /**
   * Runs `work` once every earlier `inTurn` of `userId`'s session `sessionId` has finished, in the order
   * they were queued: what one request reads of the session and writes to it, no other request changes
   * in between.
   */
  async inTurn<T>(userId: string, sessionId: string, work: () => Promise<T>): Promise<T> {
    const key = `${userId}\n${sessionId}`;
    const before = this.#turns.get(key) ?? Promise.resolve();
    let finished = () => {};
    const mine = new Promise<void>((resolve) => {
      finished = resolve;
    });
    const turn = before.then(() => mine);
    this.#turns.set(key, turn);
    try {
      await before;
      return await work();
    } finally {
      finished();
      if (this.#turns.get(key) === turn) this.#turns.delete(key);
    }
  }

  /**
   * Follows a live tree: `listener` gets every event after position `after` (those already seen first),
   * then each new one; `onEnd` when the tree ends. Returns a function that stops following.
   */
  follow(tree: LiveTree, after: number, listener: TreeListener, onEnd: () => void): () => void {
    const entry = this.#trees.get(tree.rootRunId);
    if (!entry) {
      onEnd();
      return () => {};
    }
    for (let index = Math.max(0, after + 1); index < entry.events.length; index++) {
      listener(entry.events[index]!, index);
    }
    // A position beyond the events so far (a reader's cursor from another tree, or made up) still means
    // "after this one": the new events up to it are not the reader's.
    const onward: TreeListener =
      after < entry.events.length
        ? listener
        : (event, index) => {
            if (index > after) listener(event, index);
          };
    entry.listeners.add(onward);
    entry.enders.add(onEnd);
    return () => {
      entry.listeners.delete(onward);
      entry.enders.delete(onEnd);
    };
  }

  /**
   * The answer running in `userId`'s session `sessionId` in this process: its tree's root id (once it has
   * started) and the id its stored message will have.
   */
  answerIn(userId: string, sessionId: string): { rootRunId?: string; answerId?: string } | undefined {
    for (const [controller, owner] of this.#sessions) {
      if (owner.userId !== userId || owner.sessionId !== sessionId) continue;
      let rootRunId: string | undefined;
      for (const entry of this.#trees.values())
        if (entry.controller === controller) rootRunId = entry.rootRunId;
      return { ...(rootRunId ? { rootRunId } : {}), ...(owner.answerId ? { answerId: owner.answerId } : {}) };
    }
    return undefined;
  }

  /** Trees running (or about to) for `userId`. */
  countFor(userId: string): number {
    let count = 0;
    for (const entry of this.#trees.values()) if (entry.userId === userId) count++;
    for (const pending of this.#pending.values()) if (pending.userId === userId) count++;
    return count;
  }

  /** Every live tree's completion, e.g. to wait for them at shutdown. */
  all(): LiveTree[] {
    return [...this.#trees.values()];
  }

  /** Stops every live tree (and any about to start); resolves when all have ended and are stored. */
  async cancelAll(reason = 'the server is shutting down'): Promise<void> {
    for (const controller of this.#pending.keys()) controller.abort(new Error(reason));
    const trees = [...this.#trees.values()];
    for (const entry of trees) entry.controller.abort(new Error(reason));
    await Promise.all(trees.map((entry) => entry.done));
  }
}
