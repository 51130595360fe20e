// The dialog that opens a cited passage with the citing claim's figures highlighted. Focus moves to the
// dialog's close button and back to the chip that opened it.

import { highlightRanges } from "./figures.js";
import { claimLabel } from "./marks.js";

const $ = (id) => document.getElementById(id);

function highlighted(target, text, claimText) {
  target.replaceChildren();
  let at = 0;
  for (const { start, end } of highlightRanges(claimText, text)) {
    if (start > at) target.append(text.slice(at, start));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(start, end);
    target.append(mark);
    at = end;
  }
  if (at < text.length) target.append(text.slice(at));
}

export function setUpDialog() {
  const dialog = $("passage");
  $("passage-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    const opener = dialog.opener;
    dialog.opener = null;
    if (opener && opener.isConnected) opener.focus();
  });
}

/**
 * Shows `passage` ({text, document_title, legal_reference, section_path, context?, before?, after?, note?},
 * from the passage route or else the stream's passage frame) for the claim
 * `claim` (its `text` and verdict) cited under `key`; `opener` gets the focus back on close.
 */
export function showPassage(key, passage, claim, opener) {
  const dialog = $("passage");
  $("passage-title").textContent = `Sumber ${key}`;
  $("passage-doc").textContent = passage.document_title || "Hasil alat (bukan dokumen terindeks)";
  const where = [passage.legal_reference, (passage.section_path || []).join(" › ")].filter(Boolean);
  $("passage-ref").textContent = where.join(" · ");
  const quote = $("passage-claim");
  quote.replaceChildren();
  const { mark, label, detail } = claimLabel(claim);
  const badge = document.createElement("span");
  badge.className = `badge badge-${mark}`;
  badge.textContent = detail ? `${label} · ${detail}` : label;
  const said = document.createElement("q");
  said.textContent = claim.text;
  quote.append("Pernyataan: ", said, " ", badge);
  $("passage-note").textContent = passage.note || "";
  const context = $("passage-context");
  context.textContent = passage.context ? `Konteks: ${passage.context}` : "";
  context.hidden = !passage.context;
  highlighted($("passage-text"), passage.text || "", claim.text);
  // the passage route's nearest neighbours, for the reader's sense of where it stands
  $("passage-before").textContent = (passage.before || []).map((n) => n.text).slice(-1).join("");
  $("passage-after").textContent = (passage.after || []).map((n) => n.text).slice(0, 1).join("");
  dialog.opener = opener;
  dialog.showModal();
  $("passage-close").focus();
  const first = $("passage-text").querySelector("mark");
  if (first) first.scrollIntoView({ block: "nearest" });
}
