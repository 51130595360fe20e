// Credentials (sessionStorage, this tab only) and the API calls that carry them on every request.

const KEY = "aceh-rag.api-key";
const JWT = "aceh-rag.jwt";

export function loadCredentials() {
  return { apiKey: sessionStorage.getItem(KEY) || "", jwt: sessionStorage.getItem(JWT) || "" };
}

export function saveCredentials(apiKey, jwt) {
  sessionStorage.setItem(KEY, apiKey);
  if (jwt) sessionStorage.setItem(JWT, jwt);
  else sessionStorage.removeItem(JWT);
}

export function clearCredentials() {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(JWT);
}

function authHeaders() {
  const { apiKey, jwt } = loadCredentials();
  const headers = {};
  if (apiKey) headers["X-API-Key"] = apiKey;
  if (jwt) headers["Authorization"] = `Bearer ${jwt}`;
  return headers;
}

/** An HTTP error of the service: its status, its fixed code and text, and the wait of a 429. */
export class ApiError extends Error {
  constructor(status, code, detail, retryAfterS = null) {
    super(detail);
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.retryAfterS = retryAfterS;
  }
}

/** Seconds to wait from a Retry-After header: delta-seconds or an HTTP date (RFC 9110). */
export function retryAfterSeconds(value, now = Date.now()) {
  if (value == null || value === "") return null;
  if (/^\s*\d+\s*$/.test(value)) return parseInt(value, 10);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const FALLBACK_TEXT = {
  401: "Kredensial tidak diterima.",
  404: "Tidak ditemukan.",
  409: "Percakapan ini milik rute lain.",
  413: "Permintaan terlalu besar.",
  422: "Permintaan tidak valid.",
  429: "Terlalu banyak permintaan.",
  502: "Layanan model tidak dapat menyelesaikan jawaban.",
};

function describeDetail(detail) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    // 422: the failing fields, as the service lists them
    return detail.map((d) => [(d.loc || []).join("."), d.msg].filter(Boolean).join(": ")).join("; ");
  }
  return "";
}

export async function errorOf(response) {
  let code = "http_error";
  let detail = "";
  try {
    const body = await response.json();
    code = body.error || code;
    detail = describeDetail(body.detail);
  } catch {
    // not the service's JSON error (a proxy's page, say): the status says enough
  }
  const text = detail || FALLBACK_TEXT[response.status] || `Galat HTTP ${response.status}.`;
  return new ApiError(response.status, code, text, retryAfterSeconds(response.headers.get("Retry-After")));
}

async function call(path, init) {
  let response;
  try {
    response = await fetch(path, { ...init, headers: { ...authHeaders(), ...(init.headers || {}) } });
  } catch {
    throw new ApiError(0, "network", "Tidak dapat menghubungi layanan. Periksa koneksi lalu coba lagi.");
  }
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** POST a JSON body to a streaming route; resolves to the open 200 response (its body is the SSE stream). */
export function postStream(path, body, signal) {
  return call(path, {
    method: "POST",
    signal,
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
}

export async function getJson(path) {
  const response = await call(path, { method: "GET", headers: { Accept: "application/json" } });
  return response.json();
}
