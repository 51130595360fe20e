// The figures of a claim, found again in the passage it cites so the reader sees where to look.
// Indonesian notation: "." groups thousands, "," starts decimals; a scale word may follow
// ("Rp871,67 miliar" is the same value as "Rp871.667.219.294", as the judge also holds).

const NUMBER = /\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+(?:,\d+)?/g;
const SCALE = { ribu: 1e3, juta: 1e6, miliar: 1e9, milyar: 1e9, triliun: 1e12 };
const SCALE_AFTER = /^\s*(ribu|juta|miliar|milyar|triliun)\b/i;

/** Figures in `text`: {start, end, value, decimals, scale} (offsets in UTF-16 units of `text`). */
export function figuresIn(text) {
  const out = [];
  for (const m of text.matchAll(NUMBER)) {
    const [whole, decimals = ""] = m[0].split(",");
    const scaleWord = SCALE_AFTER.exec(text.slice(m.index + m[0].length));
    const scale = scaleWord ? SCALE[scaleWord[1].toLowerCase()] : 1;
    const value = Number(`${whole.replace(/\./g, "")}.${decimals || "0"}`) * scale;
    out.push({ start: m.index, end: m.index + m[0].length, value, decimals: decimals.length, scale });
  }
  return out;
}

function sameValue(claimFigure, passageFigure) {
  if (claimFigure.scale === 1 && passageFigure.scale === 1) return claimFigure.value === passageFigure.value;
  // a rounded figure with a scale word matches the exact one it rounds
  const step = claimFigure.scale * 10 ** -claimFigure.decimals;
  return Math.abs(passageFigure.value - claimFigure.value) <= step / 2 + 1e-9 * step;
}

/** Ranges of `passage` holding a figure of `claim`, in order and without overlaps. */
export function highlightRanges(claim, passage) {
  const wanted = figuresIn(claim);
  if (!wanted.length) return [];
  return figuresIn(passage)
    .filter((p) => wanted.some((c) => sameValue(c, p)))
    .map(({ start, end }) => ({ start, end }));
}
