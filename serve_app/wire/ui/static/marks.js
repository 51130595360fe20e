// The contract's client rules as pure functions over the answer text and its `annotations` frame.
// Offsets are UTF-16 code units (start_utf16/end_utf16): JavaScript strings index the same units, so the
// answer is sliced directly, emoji and other characters outside the BMP included.

export const SCHEMA = "annotate-v2";

// What the server writes between segments (spaces, "## ", "- ", table pipes and the separator row):
// uncovered text made only of these is layout; anything else uncovered is "belum diverifikasi".
const LAYOUT_ONLY = /^(?:\s|#{1,6} |- |\|(?:\s*:?-{3,}:?\s*\|)+|\|)*$/;

const VERDICT_DETAIL = {
  unsupported: "tidak didukung sumber",
  uncited: "tanpa sumber",
  invalid_citation: "sitasinya tidak dapat diselesaikan",
  unverified: "belum dapat diperiksa",
};
const REASON_DETAIL = {
  deadline: "batas waktu habis",
  budget: "anggaran pemeriksaan habis",
  judge_unavailable: "pemeriksa tidak tersedia",
  unparseable: "hasil pemeriksaan tidak terbaca",
  disputed: "penilaian diperdebatkan",
};

/** Only `supported` is verified; `from_conversation` is neutral; every other verdict is unverified. */
export function markOf(verdict) {
  if (verdict === "supported") return "ok";
  if (verdict === "from_conversation") return "conv";
  return "warn";
}

/** The visible label of a claim's mark: {mark, label, detail}. */
export function claimLabel(claim) {
  const mark = markOf(claim.verdict);
  if (mark === "ok") return { mark, label: "terverifikasi", detail: "" };
  if (mark === "conv") return { mark, label: "dari percakapan, bukan dokumen", detail: "" };
  const detail =
    (claim.verdict === "unverified" && REASON_DETAIL[claim.unverified_reason]) ||
    VERDICT_DETAIL[claim.verdict] ||
    "";
  return { mark, label: "belum diverifikasi", detail };
}

function gap(answer, start, end) {
  return { start, end, type: LAYOUT_ONLY.test(answer.slice(start, end)) ? "layout" : "uncovered" };
}

/**
 * Ranges covering the answer in order: {start, end, type} with type "claim" (plus `claim`: its index),
 * "framing", "layout" or "uncovered". `trusted` is false when the rules say the whole text is unverified
 * (no annotations frame, another schema, or a span that cannot be placed), and then one "uncovered" range
 * covers everything. `complete` is false while (or when) the answer text has not fully arrived: a claim
 * that ends past the received text is not placed, so its received part shows as uncovered.
 */
export function layOut(answer, annotations, { schema, complete }) {
  const whole = { trusted: false, ranges: answer ? [{ start: 0, end: answer.length, type: "uncovered" }] : [] };
  if (!annotations) return { ...whole, why: "annotations" };
  if (schema !== SCHEMA) return { ...whole, why: "schema" };
  const spans = [
    ...(annotations.claims || []).map((c, i) => ({ start: c.start_utf16, end: c.end_utf16, type: "claim", claim: i })),
    ...(annotations.framing || []).map((f) => ({ start: f.start_utf16, end: f.end_utf16, type: "framing" })),
  ].sort((a, b) => a.start - b.start || a.end - b.end);
  const ranges = [];
  let at = 0;
  for (const span of spans) {
    const wellFormed = Number.isInteger(span.start) && Number.isInteger(span.end) && span.start < span.end;
    if (!wellFormed || span.start < at) return { ...whole, why: "spans" }; // overlapping or broken offsets
    if (span.end > answer.length) {
      if (complete) return { ...whole, why: "spans" }; // the whole answer arrived: the span is wrong
      break; // not received yet (or never will be): the rest of the text stays uncovered
    }
    if (span.start > at) ranges.push(gap(answer, at, span.start));
    ranges.push(span);
    at = span.end;
  }
  if (at < answer.length) ranges.push(gap(answer, at, answer.length));
  return { trusted: true, ranges, why: null };
}

/** True when any text shows as "belum diverifikasi" outside the claims (uncovered text). */
export function hasUncovered(layout) {
  return layout.ranges.some((r) => r.type === "uncovered");
}

/** Whether the answer-level banner shows: whenever verification is not "full", and whenever this client
 * could not show the answer as the annotations describe it (no annotations, a cut stream, uncovered text). */
export function needsBanner(annotations, layout, complete) {
  if (!layout.trusted || !complete || !annotations) return true;
  return annotations.verification !== "full" || hasUncovered(layout);
}

const FALLBACK_REASON = {
  policy_blocked: "diblokir oleh Policy Guard",
  query_budget_exhausted: "anggaran permintaan habis",
  model_timeout: "model melewati batas waktu",
  context_budget_exhausted: "bahan sumber tidak muat dalam konteks model",
  agent_output_limit: "jawaban melewati batas panjang",
  mcp_source_unavailable: "sumber data tidak tersedia",
  source_out_of_scope: "sumber di luar cakupan",
  source_scope_unavailable: "cakupan sumber tidak tersedia",
  unparseable_completion: "keluaran model tidak dapat dibaca",
  source_scope_empty: "pilihan dokumen kosong atau tidak dapat diakses",
};

export function fallbackText(reason) {
  return FALLBACK_REASON[reason] || reason;
}
