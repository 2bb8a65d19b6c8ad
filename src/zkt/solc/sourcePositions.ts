// Line and column (1-based) of offsets into a source, in one pass over it however many offsets are asked:
// splitting the text before each offset again cost O(source × errors) on a large source with many errors.
export function sourcePositions(code: string, offsets: number[]): { line?: number; column?: number }[] {
  const wanted = offsets.map((o, i) => ({ o, i })).filter(({ o }) => o >= 0 && o <= code.length);
  wanted.sort((a, b) => a.o - b.o);
  const out: { line?: number; column?: number }[] = offsets.map(() => ({}));
  let line = 1;
  let lineStart = 0;
  let at = 0;
  for (const { o, i } of wanted) {
    for (let nl = code.indexOf("\n", at); nl !== -1 && nl < o; nl = code.indexOf("\n", nl + 1)) {
      line++;
      lineStart = nl + 1;
    }
    at = Math.max(at, lineStart);
    out[i] = { line, column: o - lineStart + 1 };
  }
  return out;
}
