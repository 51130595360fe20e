// Reads one /query/v2/stream answer from a running service with the built reader (dist/) and prints what a
// browser client would use, as JSON: event names in order, the answer from the deltas, and each claim's text
// cut from that answer with its UTF-16 offsets (JavaScript string indices).
//   node test/read_stream.mjs BASE_URL API_KEY QUESTION
import { streamAnswer } from "../dist/index.js";

const [baseUrl, apiKey, query] = process.argv.slice(2);
const names = [];
let answer = "";
let annotations = null;
let done = null;
for await (const item of streamAnswer(baseUrl, { query }, { apiKey })) {
  names.push(item.event);
  if (item.event === "answer.delta") answer += item.data.text;
  else if (item.event === "annotations") annotations = item.data;
  else if (item.event === "done") done = item.data;
}
const claims = (annotations?.claims ?? []).map((c) => ({
  verdict: c.verdict,
  text: answer.slice(c.start_utf16, c.end_utf16),
}));
console.log(JSON.stringify({ names, answer, claims, verification: annotations?.verification, done }));
