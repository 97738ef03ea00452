// Whole numbers given on the command line (--limit, --k, --memory): decimal digits only.
// Number() also reads '0x10' (16), '1e1' (10), '0b11' (3), ' 7' and '' (0), none of which the
// user meant as that number.

/** `raw` as a whole number from `min` to `max` when it is decimal digits only; otherwise undefined. */
export function wholeNumber(raw: unknown, min: number, max: number): number | undefined {
  const text = String(raw);
  if (!/^[0-9]{1,16}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}
