// JSON-RPC 2.0 wants the request's id back as sent. JSON.parse turns 9007199254740993 into ...992 and
// 1.0 into 1; this finds the id's own text in the body so it can be echoed byte for byte.

/**
 * The text of the top-level "id" member's number value: of the request object, or (batch) of each element,
 * by element index. Undefined where the id is missing or not a number (other ids round-trip exactly).
 */
export function numericIdTexts(text: string, batch: boolean): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  const objectDepth = batch ? 2 : 1;
  let depth = 0;
  let element = -1;
  /** Whether the container at each depth is an object (keys are read only there). */
  const isObject: boolean[] = [];
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i++;
      let escaped = false;
      for (; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) {
          escaped = true;
          i++;
        } else if (d === 0x22) break;
      }
      i++;
      if (depth === 1 && batch && isObject[1] === false) element++;
      if (depth !== objectDepth || !isObject[depth]) continue;
      let j = skipSpace(text, i);
      if (text.charCodeAt(j) !== 0x3a /* : */) continue; // a value, not a key
      const key = escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
      if (key !== "id") continue;
      j = skipSpace(text, j + 1);
      let end = j;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const index = batch ? element : 0;
      out[index] = end > j ? text.slice(j, end) : undefined;
      i = Math.max(end, j);
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth === 1 && batch) element++;
      depth++;
      isObject[depth] = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (depth === 1 && batch && isObject[1] === false && (isNumberChar(c) || c === 0x74 || c === 0x66 || c === 0x6e)) {
      // A scalar element (number, true, false, null): counts as an element; skip its characters.
      element++;
      while (i < text.length && !isDelimiter(text.charCodeAt(i))) i++;
      continue;
    }
    i++;
  }
  return out;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

function isDelimiter(c: number): boolean {
  return c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
