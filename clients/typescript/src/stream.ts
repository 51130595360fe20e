// A fetch-based reader of the service's SSE streams (/query/v2/stream, /query/stream): typed events in the
// order they arrive, ending with `done` or `error`; a stream that ends before either throws StreamCut, and
// everything it carried before an `annotations` event is wholly unverified (the contract's client rule).
import type {
  AnnotationsEvent,
  AnswerDeltaEvent,
  ArtifactsEvent,
  CitationEvent,
  DoneEvent,
  ErrorEvent,
  GuardBlockedEvent,
  MessageStartEvent,
  PassageEvent,
  QueryRequest,
  QueryV2Request,
  ToolFinishedEvent,
  ToolStartedEvent,
  TraceEvent,
  V1FaithfulnessEvent,
} from "./wire.js";

export interface StreamEventMap {
  "tool.started": ToolStartedEvent;
  "tool.finished": ToolFinishedEvent;
  "message.start": MessageStartEvent;
  trace: TraceEvent;
  citation: CitationEvent;
  passage: PassageEvent;
  "guard.blocked": GuardBlockedEvent;
  annotations: AnnotationsEvent;
  faithfulness: V1FaithfulnessEvent;
  "answer.delta": AnswerDeltaEvent;
  artifacts: ArtifactsEvent;
  done: DoneEvent;
  error: ErrorEvent;
}

/** One event: `event` names it and narrows `data` to its generated type. */
export type StreamEvent = { [K in keyof StreamEventMap]: { event: K; data: StreamEventMap[K] } }[keyof StreamEventMap];

const EVENT_NAMES: ReadonlySet<string> = new Set<keyof StreamEventMap>([
  "tool.started", "tool.finished", "message.start", "trace", "citation", "passage", "guard.blocked",
  "annotations", "faithfulness", "answer.delta", "artifacts", "done", "error",
]);

export interface StreamOptions {
  apiKey: string;
  /** A partner-signed JWT, when the service has partners configured. */
  token?: string;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/** The service answered with an error status before any frame (401, 404, 409, 422, 429, ...). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly detail: unknown,
    /** Seconds, from Retry-After (429). */
    readonly retryAfter: number | null,
  ) {
    super(`${status} ${error}`);
    this.name = "ApiError";
  }
}

/** The stream ended without its terminal `done` or `error` event. */
export class StreamCut extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamCut";
  }
}

export interface RawEvent {
  event: string;
  data: string;
}

/** Server-sent events of a byte stream (WHATWG format: `event:`/`data:` fields, blank line ends an event,
 * `:` comments such as keep-alives are skipped). */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<RawEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  const take = (line: string): RawEvent | null => {
    if (line === "") {
      const out = data.length ? { event, data: data.join("\n") } : null;
      event = "message";
      data = [];
      return out;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    return null;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        const raw = take(line);
        if (raw) yield raw;
      }
    }
    buffer += decoder.decode();
    const last = take(buffer) ?? take("");
    if (last) yield last;
  } finally {
    reader.releaseLock();
  }
}

function retryAfter(response: Response): number | null {
  const value = response.headers.get("Retry-After");
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

async function open(url: string, body: unknown, options: StreamOptions): Promise<ReadableStream<Uint8Array>> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "text/event-stream",
    "X-API-Key": options.apiKey,
  };
  if (options.token !== undefined) headers["Authorization"] = `Bearer ${options.token}`;
  const init: RequestInit = { method: "POST", headers, body: JSON.stringify(body) };
  if (options.signal !== undefined) init.signal = options.signal;
  const response = await (options.fetch ?? fetch)(url, init);
  if (!response.ok || response.body === null) {
    let payload: { error?: string; detail?: unknown } = {};
    try {
      payload = (await response.json()) as typeof payload;
    } catch {
      // not JSON: the status alone says what happened
    }
    throw new ApiError(response.status, payload.error ?? "unknown", payload.detail ?? null, retryAfter(response));
  }
  return response.body;
}

async function* typed(body: ReadableStream<Uint8Array>, url: string): AsyncGenerator<StreamEvent> {
  for await (const raw of parseEventStream(body)) {
    if (!EVENT_NAMES.has(raw.event)) throw new StreamCut(`${url}: unknown event '${raw.event}'`);
    const event = { event: raw.event, data: JSON.parse(raw.data) as unknown } as StreamEvent;
    yield event;
    if (event.event === "done" || event.event === "error") return;
  }
  throw new StreamCut(`${url}: the stream ended without done or error`);
}

/** `/query/v2/stream` (annotate-v2): annotations arrive before any answer text. */
export async function* streamAnswer(
  baseUrl: string,
  request: QueryV2Request,
  options: StreamOptions,
): AsyncGenerator<StreamEvent> {
  const url = `${baseUrl.replace(/\/$/, "")}/query/v2/stream`;
  yield* typed(await open(url, request, options), url);
}

/** `/query/stream` (v1: unconfirmed sentences removed; its `faithfulness` event counts them). */
export async function* streamAnswerV1(
  baseUrl: string,
  request: QueryRequest,
  options: StreamOptions,
): AsyncGenerator<StreamEvent> {
  const url = `${baseUrl.replace(/\/$/, "")}/query/stream`;
  yield* typed(await open(url, request, options), url);
}
