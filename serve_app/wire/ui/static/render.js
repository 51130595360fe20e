// The answer's Markdown (as the server composes it from segments) rendered as DOM nodes, text only (never
// markup from the answer), with each range of marks.layOut shown by its mark and each claim's label and
// citation chips placed at the claim's end.

import { claimLabel } from "./marks.js";

const HEADING = /^(#{1,6}) /;
const LIST_ITEM = /^[-*] /;
const TABLE_SEPARATOR = /^\|(\s*:?-+:?\s*\|)+\s*$/;
const EMPHASIS = /\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*/g;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

/** Markdown emphasis inside one piece of text as <strong>/<em>; everything else as plain text. */
function appendText(parent, text) {
  let at = 0;
  for (const m of text.matchAll(EMPHASIS)) {
    if (m.index > at) parent.append(text.slice(at, m.index));
    parent.append(m[1] != null ? el("strong", "", m[1]) : el("em", "", m[2]));
    at = m.index + m[0].length;
  }
  if (at < text.length) parent.append(text.slice(at));
}

function badge(mark, label, detail) {
  const text = detail ? `${label} · ${detail}` : label;
  return el("span", `badge badge-${mark}`, text);
}

function chips(claim, index, ctx) {
  const box = el("span", "chips");
  const { mark } = claimLabel(claim);
  const invalid = new Set(claim.invalid_citation_keys || []);
  for (const key of claim.citation_keys || []) {
    if (invalid.has(key)) {
      box.append(el("span", "chip chip-invalid", `${key} (tidak valid)`));
      continue;
    }
    const button = el("button", mark === "ok" ? "chip" : "chip chip-weak", key);
    button.type = "button";
    button.dataset.key = key;
    button.dataset.claim = String(index);
    const source = ctx.describeSource(key);
    button.setAttribute(
      "aria-label",
      mark === "ok"
        ? `Buka sumber ${key}${source ? `: ${source}` : ""}`
        : `Buka sumber ${key}${source ? `: ${source}` : ""} (dirujuk, bukan bukti: belum diverifikasi)`,
    );
    button.addEventListener("click", () => ctx.openPassage(key, index, button));
    box.append(button);
  }
  return box;
}

/** Pieces of [a, b) by range, each with its mark; the claim's label and chips where the claim ends. */
function appendInline(parent, a, b, ctx) {
  const { answer, layout, claims } = ctx;
  for (const range of layout.ranges) {
    if (range.end <= a || range.start >= b) continue;
    const s = Math.max(a, range.start);
    const e = Math.min(b, range.end);
    const text = answer.slice(s, e);
    if (range.type === "layout" || range.type === "framing") {
      appendText(parent, text); // framing is not verified either, and carries no mark that could look so
      continue;
    }
    if (range.type === "uncovered") {
      const span = el("span", "mark mark-warn uncovered");
      appendText(span, text);
      parent.append(span);
      if (e === range.end) parent.append(badge("warn", "belum diverifikasi", ""));
      continue;
    }
    const claim = claims[range.claim];
    const { mark, label, detail } = claimLabel(claim);
    const span = el("span", `mark mark-${mark}`);
    span.dataset.claim = String(range.claim);
    span.dataset.verdict = claim.verdict;
    appendText(span, text);
    parent.append(span);
    if (e === range.end) {
      parent.append(badge(mark, label, detail));
      if ((claim.citation_keys || []).length) parent.append(chips(claim, range.claim, ctx));
    }
  }
}

function cellBounds(line, start) {
  // unescaped pipes separate cells; the outer ones open and close the row
  const pipes = [];
  for (let i = 0; i < line.length; i++) if (line[i] === "|" && line[i - 1] !== "\\") pipes.push(i);
  const cells = [];
  for (let k = 0; k + 1 < pipes.length; k++) {
    let s = pipes[k] + 1;
    let e = pipes[k + 1];
    while (s < e && line[s] === " ") s++;
    while (e > s && line[e - 1] === " ") e--;
    cells.push([start + s, start + e]);
  }
  return cells;
}

/**
 * Renders `ctx.answer` into `container`. ctx: {answer, layout (marks.layOut), claims (annotations claims),
 * describeSource(key) → text, openPassage(key, claimIndex, button)}.
 */
export function renderAnswer(container, ctx) {
  container.replaceChildren();
  const lines = [];
  let at = 0;
  for (const text of ctx.answer.split("\n")) {
    lines.push({ text, start: at });
    at += text.length + 1;
  }
  let paragraph = null;
  let list = null;
  let table = null;
  const close = () => {
    paragraph = list = table = null;
  };
  lines.forEach(({ text, start }, n) => {
    const end = start + text.length;
    if (!text.trim()) return close();
    let m;
    if ((m = HEADING.exec(text))) {
      close();
      const level = Math.min(6, m[1].length + 1); // the page's own h1/h2 stay above the answer's headings
      const h = el(`h${level}`, "answer-heading");
      appendInline(h, start + m[0].length, end, ctx);
      container.append(h);
    } else if ((m = LIST_ITEM.exec(text))) {
      if (!list) {
        close();
        list = el("ul");
        container.append(list);
      }
      const li = el("li");
      appendInline(li, start + m[0].length, end, ctx);
      list.append(li);
    } else if (text.startsWith("|")) {
      if (TABLE_SEPARATOR.test(text)) return;
      if (!table) {
        close();
        table = el("table");
        container.append(table);
      }
      const header = n + 1 < lines.length && TABLE_SEPARATOR.test(lines[n + 1].text);
      const row = el("tr");
      for (const [s, e] of cellBounds(text, start)) {
        const cell = el(header ? "th" : "td");
        appendInline(cell, s, e, ctx);
        row.append(cell);
      }
      table.append(row);
    } else {
      if (list || table) close();
      if (paragraph) paragraph.append(el("br"));
      else {
        paragraph = el("p");
        container.append(paragraph);
      }
      appendInline(paragraph, start, end, ctx);
    }
  });
}
