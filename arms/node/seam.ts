/**
 * The seam (version 2) for TypeScript and JavaScript arms: an arm is a class with `openSession`
 * and `turn` (and `ingest` for a memory benchmark's history, seam v2), and `serve(arm)` owns the
 * rest, as arms/server.py does for Python arms. docs/seam.md describes the protocol.
 *
 *     import { Arm, OpenSession, Turn, serve } from "./seam";
 *     class Echo extends Arm {
 *       name = "echo";
 *       async openSession(session: OpenSession) {}
 *       async *turn(sessionId: string, turn: Turn) { yield turn.user; }
 *     }
 *     serve(new Echo());
 *
 * Node built-ins only (http): the helper adds no dependency to an arm. It keeps the seam's
 * promises so an arm cannot get them wrong: which sessions exist (404 / 409), body validation
 * (422, unknown fields refused like the Python side's `extra="forbid"`), one NDJSON line per
 * delta written as soon as the arm yields it, the final `done` line with the full text, an
 * `error` line instead of a crash when the arm throws, turns of one session one at a time, and
 * the arm's work aborted (`turn.signal`) when the orchestrator cuts the turn and disconnects.
 * The wire shapes are arms/seam.py's; that file is the reference.
 */

import * as http from "http";

// A memory arm shows what it recalled in the layout the audit counts (arms/node/recall.ts).
export { recallSection } from "./recall";

export const SEAM_VERSION = 2;
export const READY_PREFIX = "seam ready ";
const NDJSON = "application/x-ndjson";
const MAX_BODY_BYTES = 1 << 20; // a turn is a message, not a document: refuse anything larger
const MAX_INGEST_BYTES = 16 << 20; // one history session (LongMemEval's longest are ~100 kB)
const SESSION_ID = /^[A-Za-z0-9._:-]+$/;

export interface OpenSession {
  session_id: string;
  item_id: string;
  /** The item's pinned wall time, as sent (ISO 8601). Take "now" from here, not `Date.now()`. */
  clock: string;
  context: string | null;
  /** A study's engine parity (arms/seam.py EngineParity, docs/studies.md): what every memory
   * arm under it uses; null when the study sets none. A memory arm must use each field set. */
  parity: EngineParity | null;
}

export interface EngineParity {
  top_k: number | null;
  answer_model: string | null;
  answer_prompt: string | null;
  answer_max_tokens: number | null;
  embed_model: string | null;
}

export interface Turn {
  turn: number;
  user: string;
  addon: string;
  /** A coupled study (docs/coupled.md): the arm whose turn context `addon` is, else null. */
  addon_from: string | null;
  deadline_ms: number;
  clock: string;
  /** The user's message with the study's addon appended, as every arm must send it (never
   * another arm's turn context). */
  userMessage(): string;
  /** Another arm's turn context for this turn, to send as a system prompt ("" if none). */
  systemAddon(): string;
  /** Aborted when the orchestrator cut the turn (it closed the connection). */
  signal: AbortSignal;
}

export interface IngestMessage {
  role: "user" | "assistant";
  content: string;
  speaker: string | null;
}

/** One history session of a memory benchmark (seam v2), as it happened at `date`. */
export interface Ingest {
  session_id: string;
  date: string;
  messages: IngestMessage[];
  deadline_ms: number;
  /** Aborted when the orchestrator's ingest deadline passed (it closed the connection). */
  signal: AbortSignal;
}

export abstract class Arm {
  abstract readonly name: string;
  /** The folder all of the arm's memory lives in (process.env.ARM_STATE_DIR), if any: the
   * harness snapshots it after a history is ingested and starts the arm on a copy per question. */
  readonly stateDir: string | null = null;
  /** Take one history session into the session's memory; how many memories were kept. The
   * default refuses (501), so a memory benchmark never runs an arm that silently keeps nothing. */
  async ingest(_sessionId: string, _ingest: Ingest): Promise<number> {
    throw new Refusal(501, "not_implemented", `arm '${this.name}' does not ingest history (seam v2)`);
  }
  abstract openSession(session: OpenSession): Promise<void>;
  /** Yield the reply as text deltas (`async *turn(...) { yield ... }`). */
  abstract turn(sessionId: string, turn: Turn): AsyncIterable<string>;
  async closeSession(_sessionId: string): Promise<void> {}
  async shutdown(): Promise<void> {}
}

type ErrorKind =
  | "unknown_session"
  | "duplicate_session"
  | "bad_request"
  | "not_found"
  | "bad_method"
  | "arm_failed"
  | "not_implemented";

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
  }
}

type Field = "string" | "int" | "datetime" | "nullable-string" | "messages" | "parity";
type Schema = Record<string, { type: Field; required: boolean; min?: number }>;

const OPEN_SESSION: Schema = {
  session_id: { type: "string", required: true, min: 1 },
  item_id: { type: "string", required: true, min: 1 },
  clock: { type: "datetime", required: true },
  context: { type: "nullable-string", required: false },
  parity: { type: "parity", required: false },
};
const TURN: Schema = {
  turn: { type: "int", required: true, min: 0 },
  user: { type: "string", required: true },
  addon: { type: "string", required: false },
  addon_from: { type: "nullable-string", required: false },
  deadline_ms: { type: "int", required: true, min: 1 },
  clock: { type: "datetime", required: true },
};

const INGEST: Schema = {
  session_id: { type: "string", required: true, min: 1 },
  date: { type: "datetime", required: true },
  messages: { type: "messages", required: true },
  deadline_ms: { type: "int", required: true, min: 1 },
};

function isMessage(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  const known = Object.keys(m).every((k) => k === "role" || k === "content" || k === "speaker");
  return (
    known &&
    (m.role === "user" || m.role === "assistant") &&
    typeof m.content === "string" &&
    (m.speaker === undefined || m.speaker === null || typeof m.speaker === "string")
  );
}

const PARITY_FIELDS: Record<string, "int" | "string"> = {
  top_k: "int", answer_model: "string", answer_prompt: "string", answer_max_tokens: "int", embed_model: "string",
};

/** An EngineParity object: only its fields, each null or of its type (ints at least 1). */
function isParity(value: unknown): value is EngineParity {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.entries(value as Record<string, unknown>).every(([key, field]) => {
    const type = PARITY_FIELDS[key];
    if (type === undefined) return false;
    if (field === null) return true;
    return type === "int" ? Number.isInteger(field) && (field as number) >= 1 : typeof field === "string";
  });
}

function validate(name: string, raw: string, schema: Schema): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (e) {
    throw new Refusal(422, "bad_request", `invalid ${name} body: not JSON (${String(e)})`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Refusal(422, "bad_request", `invalid ${name} body: expected a JSON object`);
  }
  const record = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(record)) {
    if (!(key in schema)) problems.push(`${key}: extra inputs are not permitted`);
  }
  for (const [key, rule] of Object.entries(schema)) {
    const value = record[key];
    if (value === undefined) {
      if (rule.required) problems.push(`${key}: field required`);
      continue;
    }
    const ok =
      rule.type === "string"
        ? typeof value === "string" && value.length >= (rule.min ?? 0)
        : rule.type === "nullable-string"
          ? value === null || typeof value === "string"
          : rule.type === "int"
            ? Number.isInteger(value) && (value as number) >= (rule.min ?? -Infinity)
            : rule.type === "messages"
              ? Array.isArray(value) && value.every(isMessage)
              : rule.type === "parity"
                ? value === null || isParity(value)
                : typeof value === "string" && !Number.isNaN(Date.parse(value));
    if (!ok) problems.push(`${key}: not a valid ${rule.type}${rule.min ? ` >= ${rule.min}` : ""}`);
  }
  if (problems.length) {
    throw new Refusal(422, "bad_request", `invalid ${name} body: ${problems.join("; ")}`);
  }
  return record;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const first = e.message.trim().split("\n")[0];
    return first ? `${e.name}: ${first}` : e.name;
  }
  return String(e);
}

function readBody(req: http.IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is read and dropped, so the sender gets its 422 instead of a
      // reset; a sender that goes on far past it is cut off.
      if (size > 16 * limit) req.destroy();
      else if (size <= limit) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > limit) {
        reject(new Refusal(422, "bad_request", `body larger than ${limit} bytes`));
      } else {
        resolve(Buffer.concat(chunks).toString("utf8"));
      }
    });
    req.on("error", reject);
  });
}

export class SeamServer {
  readonly sessions = new Map<string, OpenSession>();
  // Turns of one session run one after another: a cut turn's abort settles before the next.
  private readonly queues = new Map<string, Promise<void>>();
  readonly server: http.Server;

  constructor(readonly arm: Arm) {
    this.server = http.createServer((req, res) => {
      this.route(req, res).catch((e: unknown) => {
        if (e instanceof Refusal) {
          send(res, e.status, { error: e.kind, message: e.message });
        } else if (!res.headersSent) {
          console.error(`${req.method} ${req.url} failed:`, e);
          send(res, 500, { error: "arm_failed", message: `${this.arm.name}: ${describe(e)}` });
        } else {
          res.destroy();
        }
      });
    });
    // Sessions are long-lived and turns can take a minute: never drop an idle keep-alive.
    this.server.keepAliveTimeout = 300_000;
    this.server.requestTimeout = 0;
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://seam").pathname;
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    const allowed =
      path === "/health" ? "GET" : path === "/sessions" ? "POST"
        : parts[0] === "sessions" && parts.length === 3 && parts[2] === "turns" ? "POST"
        : parts[0] === "sessions" && parts.length === 3 && parts[2] === "ingest" ? "POST"
          : parts[0] === "sessions" && parts.length === 2 ? "DELETE" : null;
    if (allowed === null) throw new Refusal(404, "not_found", `${req.method} ${path}: not found`);
    if (req.method !== allowed) {
      throw new Refusal(405, "bad_method", `${req.method} ${path}: use ${allowed}`);
    }
    if (path === "/health") {
      return send(res, 200, { seam: SEAM_VERSION, arm: this.arm.name, state_dir: this.arm.stateDir });
    }
    if (path === "/sessions") return this.open(await readBody(req), res);
    const sessionId = parts[1];
    if (!this.sessions.has(sessionId)) {
      throw new Refusal(404, "unknown_session", `no session '${sessionId}' is open; POST /sessions first`);
    }
    if (parts.length === 3 && parts[2] === "ingest") {
      return this.ingest(sessionId, await readBody(req, MAX_INGEST_BYTES), res);
    }
    if (parts.length === 3) return this.turn(sessionId, await readBody(req), req, res);
    this.sessions.delete(sessionId);
    this.queues.delete(sessionId);
    await this.arm.closeSession(sessionId);
    send(res, 200, { session_id: sessionId });
  }

  private async open(raw: string, res: http.ServerResponse): Promise<void> {
    const body = validate("OpenSession", raw, OPEN_SESSION);
    const id = body.session_id as string;
    if (id.length > 200 || !SESSION_ID.test(id)) {
      throw new Refusal(422, "bad_request", "invalid OpenSession body: session_id: use [A-Za-z0-9._:-], at most 200");
    }
    if (this.sessions.has(id)) {
      throw new Refusal(409, "duplicate_session", `session '${id}' is already open; DELETE it first or use a new id`);
    }
    const session: OpenSession = {
      session_id: id,
      item_id: body.item_id as string,
      clock: body.clock as string,
      context: (body.context as string | null | undefined) ?? null,
      parity: (body.parity as EngineParity | null | undefined) ?? null,
    };
    this.sessions.set(id, session);
    try {
      await this.arm.openSession(session);
    } catch (e) {
      this.sessions.delete(id); // so the orchestrator's retry of the same id can succeed
      console.error("openSession failed:", e);
      throw new Refusal(500, "arm_failed", `${this.arm.name}.openSession: ${describe(e)}`);
    }
    send(res, 201, { session_id: id });
  }

  private async ingest(sessionId: string, raw: string, res: http.ServerResponse): Promise<void> {
    const body = validate("Ingest", raw, INGEST);
    const cut = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) cut.abort(new Error("the orchestrator stopped the ingestion"));
    });
    const ingest: Ingest = {
      session_id: body.session_id as string,
      date: body.date as string,
      messages: (body.messages as Record<string, unknown>[]).map((m) => ({
        role: m.role as "user" | "assistant",
        content: m.content as string,
        speaker: (m.speaker as string | null | undefined) ?? null,
      })),
      deadline_ms: body.deadline_ms as number,
      signal: cut.signal,
    };
    // One at a time with the session's turns, like them.
    const previous = this.queues.get(sessionId) ?? Promise.resolve();
    const run = previous.then(() => this.arm.ingest(sessionId, ingest));
    this.queues.set(sessionId, run.then(() => undefined, () => undefined));
    let stored: number;
    try {
      stored = await run;
    } catch (e) {
      if (e instanceof Refusal) throw e;
      console.error(`ingesting ${ingest.session_id} into session ${sessionId} failed:`, e);
      throw new Refusal(500, "arm_failed", `${this.arm.name}.ingest: ${describe(e)}`);
    }
    send(res, 200, { session_id: ingest.session_id, stored: Math.max(0, Math.floor(Number(stored) || 0)) });
  }

  private async turn(
    sessionId: string,
    raw: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<void> {
    const body = validate("Turn", raw, TURN);
    const cut = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) cut.abort(new Error("the orchestrator cut the turn"));
    });
    const addon = (body.addon as string | undefined) ?? "";
    const addonFrom = (body.addon_from as string | null | undefined) ?? null;
    const scripted = addonFrom === null ? addon : "";
    const turn: Turn = {
      turn: body.turn as number,
      user: body.user as string,
      addon,
      addon_from: addonFrom,
      deadline_ms: body.deadline_ms as number,
      clock: body.clock as string,
      userMessage: () => (scripted ? `${body.user as string}\n\n${scripted}` : (body.user as string)),
      systemAddon: () => (addonFrom === null ? "" : addon),
      signal: cut.signal,
    };
    res.writeHead(200, { "content-type": NDJSON, "cache-control": "no-store", "x-accel-buffering": "no" });
    const previous = this.queues.get(sessionId) ?? Promise.resolve();
    const run = previous.then(() => this.stream(sessionId, turn, res, cut.signal));
    this.queues.set(sessionId, run.catch(() => undefined));
    await run;
  }

  private async stream(sessionId: string, turn: Turn, res: http.ServerResponse, cut: AbortSignal): Promise<void> {
    const parts: string[] = [];
    const line = (value: object) => res.write(JSON.stringify(value) + "\n");
    const reply = this.arm.turn(sessionId, turn)[Symbol.asyncIterator]();
    // A cut stops the wait for the arm's next delta at once, even if the arm never looks at
    // `turn.signal` (the Python helper cancels the task the same way).
    const aborted = new Promise<"cut">((resolve) => cut.addEventListener("abort", () => resolve("cut"), { once: true }));
    try {
      while (!cut.aborted) {
        const next = await Promise.race([reply.next(), aborted]);
        if (next === "cut" || next.done) break;
        if (typeof next.value !== "string") {
          throw new TypeError(`turn() yielded ${typeof next.value}, expected string`);
        }
        if (next.value) { // an empty delta would count as a first token that carried nothing
          parts.push(next.value);
          line({ type: "delta", text: next.value });
        }
      }
    } catch (e) {
      if (!cut.aborted) {
        console.error(`turn ${turn.turn} of session ${sessionId} failed:`, e);
        line({ type: "error", message: describe(e) });
      }
      res.end();
      return;
    } finally {
      // Close the generator so its `finally` blocks run now. A cut one may still be inside an
      // await, where `return()` waits for it: then it is not waited for.
      const closing = reply.return?.();
      if (cut.aborted) closing?.catch(() => undefined);
      else await closing;
    }
    if (!cut.aborted) line({ type: "done", text: parts.join("") });
    res.end();
  }
}

/** Serve `arm` until SIGINT/SIGTERM; prints the ready line once it accepts connections.
 * SEAM_HOST and SEAM_PORT (the harness sets both) override the defaults. */
export function serve(arm: Arm, host = process.env.SEAM_HOST ?? "127.0.0.1", port = Number(process.env.SEAM_PORT ?? 8700)): SeamServer {
  const seam = new SeamServer(arm);
  seam.server.listen(port, host, () => {
    const address = seam.server.address();
    const bound = typeof address === "object" && address ? address.port : port;
    const shown = host.includes(":") ? `[${host}]` : host;
    console.log(`${READY_PREFIX}http://${shown}:${bound} arm=${arm.name} seam=${SEAM_VERSION}`);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // `docker stop` waits 10 s before SIGKILL: finish or drop in-flight turns within 5.
    setTimeout(() => process.exit(0), 5000).unref();
    seam.server.close();
    seam.server.closeAllConnections?.();
    arm.shutdown().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return seam;
}
