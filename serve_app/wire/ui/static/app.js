// The page: credentials, the question form, and one turn per question asked over /query/v2/stream,
// continued in place in the same conversation.

import { ApiError, clearCredentials, getJson, loadCredentials, postStream, saveCredentials } from "./api.js";
import { fallbackText, layOut, needsBanner, SCHEMA } from "./marks.js";
import { setUpDialog, showPassage } from "./passage.js";
import { renderAnswer } from "./render.js";
import { readFrames } from "./sse.js";

const $ = (id) => document.getElementById(id);
const state = { conversationId: null, busy: false, waitUntil: 0, timer: null };

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

// ------------------------------------------------------------------ credentials

function showCredentialState() {
  const { apiKey, jwt } = loadCredentials();
  $("api-key").value = apiKey;
  $("jwt").value = jwt;
  $("cred-status").textContent = apiKey
    ? `Kredensial tersimpan untuk sesi ini${jwt ? " (dengan token JWT)" : ""}.`
    : "Belum ada kunci API.";
}

function setUpCredentials() {
  $("cred-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const apiKey = $("api-key").value.trim();
    if (!apiKey) {
      $("cred-status").textContent = "Kunci API wajib diisi.";
      $("api-key").focus();
      return;
    }
    saveCredentials(apiKey, $("jwt").value.trim());
    showCredentialState();
    $("question").focus();
  });
  $("cred-clear").addEventListener("click", () => {
    clearCredentials();
    showCredentialState();
    $("api-key").focus();
  });
  showCredentialState();
}

// ------------------------------------------------------------------ conversation

function showConversation() {
  $("conversation").textContent = state.conversationId
    ? `Percakapan ${state.conversationId.slice(0, 8)}… berlanjut di sini.`
    : "";
}

function newConversation() {
  state.conversationId = null;
  $("thread").replaceChildren();
  $("ask-status").textContent = "";
  showConversation();
  $("question").focus();
}

// ------------------------------------------------------------------ 429

function setWaiting(seconds) {
  clearInterval(state.timer);
  state.waitUntil = Date.now() + seconds * 1000;
  const tick = () => {
    const left = Math.ceil((state.waitUntil - Date.now()) / 1000);
    if (left <= 0) {
      clearInterval(state.timer);
      $("ask").disabled = false;
      $("ask").textContent = "Tanya";
      return;
    }
    $("ask").disabled = true;
    $("ask").textContent = `Tunggu ${left} detik`;
  };
  tick();
  state.timer = setInterval(tick, 1000);
}

// ------------------------------------------------------------------ one turn

function newTurn(question) {
  const item = el("li", "turn");
  const q = el("h3", "question", question);
  q.tabIndex = -1;
  const status = el("p", "status", "Mengirim pertanyaan…");
  status.setAttribute("role", "status");
  const banner = el("div", "banner");
  banner.hidden = true;
  banner.setAttribute("role", "note");
  const notice = el("p", "notice");
  notice.hidden = true;
  const answer = el("div", "answer");
  answer.setAttribute("aria-live", "polite");
  answer.setAttribute("aria-busy", "true");
  answer.setAttribute("aria-label", "Jawaban");
  const meta = el("p", "hint meta");
  item.append(q, status, banner, notice, answer, meta);
  $("thread").append(item);
  return { item, status, banner, notice, answer, meta };
}

function passageFor(turn, key) {
  return turn.passages[key] || turn.citations[key] || null;
}

async function openPassage(turn, key, claimIndex, button) {
  const annotated = turn.annotations.claims[claimIndex];
  const claim = { ...annotated, text: turn.answer.slice(annotated.start_utf16, annotated.end_utf16) };
  const shown = passageFor(turn, key) || {};
  let passage = { ...shown };
  if (!shown.text) passage.note = "Teks sumber ini tidak dikirim bersama jawaban.";
  if (shown.document_id && shown.chunk_id) {
    // The passage route gives the reader's context; the stream's own passage frame is the fallback.
    const path = `/documents/${encodeURIComponent(shown.document_id)}/passages/${encodeURIComponent(shown.chunk_id)}`;
    try {
      const found = await getJson(path);
      const { citation_key: _unused, ...citation } = found.citation || {};
      passage = { ...shown, ...citation, ...found, text: found.text || shown.text, note: "" };
    } catch (error) {
      if (!shown.text) passage.note = `Sumber tidak dapat dibuka: ${error.message}`;
    }
  }
  showPassage(key, passage, claim, button);
}

function render(turn, { complete }) {
  const layout = layOut(turn.answer, turn.annotations, { schema: turn.schema, complete });
  renderAnswer(turn.view.answer, {
    answer: turn.answer,
    layout,
    claims: layout.trusted ? turn.annotations.claims : [],
    describeSource: (key) => {
      const p = passageFor(turn, key);
      return p ? [p.document_title, p.legal_reference].filter(Boolean).join(", ") : "";
    },
    openPassage: (key, index, button) => openPassage(turn, key, index, button),
  });
  return layout;
}

function finish(turn, outcome) {
  const { view, annotations } = turn;
  const complete = outcome === "done";
  const layout = render(turn, { complete });
  const lines = [];
  if (!layout.trusted) {
    lines.push(
      layout.why === "annotations"
        ? "Jawaban ini belum diverifikasi: tanda verifikasi tidak diterima, jadi seluruh teks ditampilkan sebagai belum diverifikasi."
        : layout.why === "schema"
          ? `Jawaban ini belum diverifikasi: kontraknya bukan ${SCHEMA}.`
          : "Jawaban ini belum diverifikasi: tanda verifikasinya tidak dapat ditempatkan pada teks.",
    );
  } else if (needsBanner(annotations, layout, complete)) {
    const g = annotations.grounding || {};
    lines.push(
      g.claims_total
        ? `Jawaban ini belum sepenuhnya terverifikasi: ${g.claims_supported} dari ${g.claims_total} pernyataan terverifikasi.`
        : "Jawaban ini belum terverifikasi: tidak ada pernyataan yang diperiksa terhadap dokumen.",
    );
  }
  if (outcome === "cut") lines.push("Aliran jawaban terputus sebelum selesai; teks mungkin tidak lengkap.");
  view.banner.replaceChildren(...lines.map((line) => el("p", "", line)));
  view.banner.hidden = lines.length === 0;
  if (annotations && annotations.fallback_used) {
    view.notice.hidden = false;
    view.notice.textContent = `Penolakan: ${fallbackText(annotations.fallback_reason)}${
      turn.blocked && turn.blocked.category ? ` (kategori: ${turn.blocked.category})` : ""
    }.`;
  }
  view.answer.setAttribute("aria-busy", "false");
  view.meta.textContent = turn.traceId ? `trace ${turn.traceId}` : "";
  return complete ? "Selesai." : "Berhenti.";
}

function showError(turn, error) {
  const view = turn.view;
  view.notice.hidden = false;
  view.notice.classList.add("error");
  const prefix = error.status ? `Galat ${error.status}: ` : "";
  view.notice.textContent = `${prefix}${error.detail || error.message}`;
  if (error.status === 429 && error.retryAfterS != null) {
    view.notice.textContent += ` Coba lagi dalam ${error.retryAfterS} detik.`;
    setWaiting(error.retryAfterS);
  }
}

async function consume(turn, response) {
  const view = turn.view;
  view.status.textContent = "Menunggu jawaban…";
  let outcome = "cut";
  try {
    for await (const { event, data } of readFrames(response)) {
      const frame = JSON.parse(data);
      if (event === "tool.started") view.status.textContent = `Mencari di dokumen (${frame.tool})…`;
      else if (event === "message.start") {
        turn.schema = frame.schema;
        if (frame.conversation_id) state.conversationId = frame.conversation_id;
        showConversation();
        view.status.textContent = "Menerima jawaban…";
      } else if (event === "trace") turn.traceId = frame.trace_id;
      else if (event === "citation") turn.citations[frame.citation_key] = frame;
      else if (event === "passage") turn.passages[frame.citation_key] = frame;
      else if (event === "guard.blocked") turn.blocked = frame;
      else if (event === "annotations") turn.annotations = frame;
      else if (event === "answer.delta") {
        turn.answer += frame.text;
        render(turn, { complete: false });
      } else if (event === "done") {
        outcome = "done";
        break;
      } else if (event === "error") {
        outcome = "error";
        showError(turn, new ApiError(frame.status, frame.error, frame.detail));
        break;
      }
    }
  } catch {
    outcome = "cut"; // the connection broke, or a frame was not JSON: what arrived is shown, unverified
  }
  return finish(turn, outcome);
}

async function ask(question) {
  const { apiKey } = loadCredentials();
  if (!apiKey) {
    $("ask-status").textContent = "Masukkan kunci API terlebih dahulu.";
    $("api-key").focus();
    return;
  }
  $("ask-status").textContent = "";
  state.busy = true;
  $("ask").disabled = true;
  const turn = { view: newTurn(question), answer: "", annotations: null, schema: null, citations: {}, passages: {}, blocked: null, traceId: null };
  const body = { query: question };
  if (state.conversationId) body.conversation_id = state.conversationId;
  let ending = "Gagal.";
  try {
    const response = await postStream("/query/v2/stream", body);
    ending = await consume(turn, response);
  } catch (error) {
    turn.view.answer.setAttribute("aria-busy", "false");
    showError(turn, error instanceof ApiError ? error : new ApiError(0, "client", String(error)));
    if (!$("question").value) $("question").value = question; // nothing was answered: keep the question
    if (error.status === 401) $("api-key").focus();
  } finally {
    state.busy = false;
    if (Date.now() >= state.waitUntil) $("ask").disabled = false;
    turn.view.status.textContent = ending; // last: the page is ready for the next question when it shows
  }
}

function setUpQuestion() {
  const form = $("ask-form");
  const input = $("question");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (state.busy || Date.now() < state.waitUntil) return;
    if (!question) {
      $("ask-status").textContent = "Pertanyaan tidak boleh kosong.";
      input.focus();
      return;
    }
    input.value = "";
    ask(question);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  $("new-conversation").addEventListener("click", newConversation);
}

setUpCredentials();
setUpQuestion();
setUpDialog();
document.documentElement.dataset.ready = "true";
