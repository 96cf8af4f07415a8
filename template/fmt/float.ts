/**
 * Float to text like Go's strconv.FormatFloat ('e', 'E', 'f', 'g', 'G', 'b', 'x', 'X').
 * Shortest digits come from the JS engine (it also prints the shortest round-tripping digits);
 * fixed precision uses the exact binary value in BigInt arithmetic, so halfway cases round to even
 * as Go does (JS toFixed rounds them up).
 */

/** A non-negative decimal 0.d × 10^dp; `d` has no leading or trailing zeros ('' is zero). */
interface Decimal {
  d: string;
  dp: number;
}

const view = new DataView(new ArrayBuffer(8));

/** Mantissa and binary exponent of a finite non-negative double: x = mant × 2^exp. */
function decompose(x: number): { mant: bigint; exp: number } {
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased === 0) return { mant: frac, exp: -1074 };
  return { mant: frac | (1n << 52n), exp: biased - 1075 };
}

function trimZeros(d: string, dp: number): Decimal {
  let end = d.length;
  while (end > 0 && d.charCodeAt(end - 1) === 48) end--;
  let start = 0;
  while (start < end && d.charCodeAt(start) === 48) start++;
  if (start === end) return { d: '', dp: 0 };
  return { d: d.slice(start, end), dp: dp - start };
}

/** The exact decimal value of |x|. */
function exactDecimal(x: number): Decimal {
  if (x === 0) return { d: '', dp: 0 };
  const { mant, exp } = decompose(Math.abs(x));
  if (exp >= 0) {
    const s = (mant << BigInt(exp)).toString();
    return trimZeros(s, s.length);
  }
  const s = (mant * 5n ** BigInt(-exp)).toString();
  return trimZeros(s, s.length + exp);
}

/** The shortest decimal that reads back as |x|. */
function shortestDecimal(x: number): Decimal {
  if (x === 0) return { d: '', dp: 0 };
  const e = Math.abs(x).toExponential();
  const at = e.indexOf('e');
  const digits = e.slice(0, at).replace('.', '');
  return trimZeros(digits, Number(e.slice(at + 1)) + 1);
}

/** Rounds to `nd` significant digits, halfway cases to even (on the exact value). */
function roundDecimal(dec: Decimal, nd: number): Decimal {
  const { d, dp } = dec;
  if (nd < 0) return { d: '', dp: 0 };
  if (nd >= d.length) return dec;
  const next = d.charCodeAt(nd) - 48;
  let up: boolean;
  if (next > 5) up = true;
  else if (next < 5) up = false;
  else if (nd + 1 < d.length)
    up = true; // more non-zero digits follow (d has no trailing zeros)
  else up = nd > 0 && (d.charCodeAt(nd - 1) - 48) % 2 === 1;
  if (!up) return trimZeros(d.slice(0, nd), dp);
  let i = nd - 1;
  while (i >= 0 && d.charCodeAt(i) === 57) i--;
  if (i < 0) return { d: '1', dp: dp + 1 };
  return trimZeros(d.slice(0, i) + String.fromCharCode(d.charCodeAt(i) + 1), dp);
}

function digitAt(dec: Decimal, i: number): string {
  return i >= 0 && i < dec.d.length ? dec.d.charAt(i) : '0';
}

function expText(exp: number, letter: string): string {
  const sign = exp < 0 ? '-' : '+';
  const a = Math.abs(exp);
  return letter + sign + (a < 10 ? '0' + a : String(a));
}

/** %e layout of `dec` with `prec` digits after the point. */
function layoutE(dec: Decimal, prec: number, letter: string): string {
  let s = dec.d.length === 0 ? '0' : dec.d.charAt(0);
  if (prec > 0) {
    s += '.';
    for (let i = 1; i <= prec; i++) s += digitAt(dec, i);
  }
  const exp = dec.d.length === 0 ? 0 : dec.dp - 1;
  return s + expText(exp, letter);
}

/** %f layout of `dec` with `prec` digits after the point. */
function layoutF(dec: Decimal, prec: number): string {
  let s = '';
  if (dec.dp > 0) {
    for (let i = 0; i < dec.dp; i++) s += digitAt(dec, i);
  } else s = '0';
  if (prec > 0) {
    s += '.';
    for (let i = 0; i < prec; i++) s += digitAt(dec, dec.dp + i);
  }
  return s;
}

/** FormatFloat for finite or special x; prec -1 means shortest. The result has '-' for negatives. */
export function formatFloat(x: number, fmt: string, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  const sign = neg ? '-' : '';
  if (fmt === 'b') return sign + formatBinary(x);
  if (fmt === 'x' || fmt === 'X') return sign + formatHex(Math.abs(x), prec, fmt === 'X');
  const shortest = prec < 0;
  switch (fmt) {
    case 'e':
    case 'E': {
      const dec = shortest ? shortestDecimal(x) : roundDecimal(exactDecimal(x), prec + 1);
      return sign + layoutE(dec, shortest ? Math.max(dec.d.length - 1, 0) : prec, fmt);
    }
    case 'f':
    case 'F': {
      const exact = shortest ? shortestDecimal(x) : exactDecimal(x);
      const dec = shortest ? exact : roundDecimal(exact, exact.dp + prec);
      return sign + layoutF(dec, shortest ? Math.max(dec.d.length - dec.dp, 0) : prec);
    }
    default: {
      // 'g' / 'G'
      let p = prec === 0 ? 1 : prec;
      const dec = shortest ? shortestDecimal(x) : roundDecimal(exactDecimal(x), p);
      if (shortest) p = dec.d.length;
      let eprec = p;
      if (eprec > dec.d.length && dec.d.length >= dec.dp) eprec = dec.d.length;
      if (shortest) eprec = 6;
      const exp = dec.dp - 1;
      if (dec.d.length !== 0 && (exp < -4 || exp >= eprec)) {
        const ep = Math.min(p, dec.d.length);
        return sign + layoutE(dec, ep - 1, fmt === 'G' ? 'E' : 'e');
      }
      const fp = p > dec.dp ? dec.d.length : p;
      return sign + layoutF(dec, Math.max(fp - dec.dp, 0));
    }
  }
}

/** %b: decimal mantissa, 'p', binary exponent. */
function formatBinary(x: number): string {
  const { mant, exp } = decompose(Math.abs(x));
  return mant.toString() + 'p' + (exp >= 0 ? '+' : '-') + Math.abs(exp);
}

/** %x: 0x1.hhhp±dd with the leading digit 1 (0 for zero); prec -1 keeps all needed hex digits. */
function formatHex(x: number, prec: number, upper: boolean): string {
  let mant: bigint;
  let exp: number;
  if (x === 0) {
    mant = 0n;
    exp = 0;
  } else {
    ({ mant, exp } = decompose(x));
    // normalise so the top bit sits at position 52: 1.fffff × 2^(exp+52)
    while (mant < 1n << 52n) {
      mant <<= 1n;
      exp--;
    }
    exp += 52;
  }
  let digits = 13;
  if (prec >= 0 && prec < 13) {
    // round the whole 1.fff mantissa half to even at `prec` hex digits
    const shift = BigInt((13 - prec) * 4);
    const half = 1n << (shift - 1n);
    const rem = mant & ((1n << shift) - 1n);
    mant >>= shift;
    if (rem > half || (rem === half && (mant & 1n) === 1n)) mant += 1n;
    if (mant >> BigInt(prec * 4) >= 2n) {
      mant >>= 1n;
      exp++;
    }
    digits = prec;
  }
  const lead = mant >> BigInt(digits * 4);
  const frac = mant & ((1n << BigInt(digits * 4)) - 1n);
  let hex = digits > 0 ? frac.toString(16).padStart(digits, '0') : '';
  if (prec < 0) hex = hex.replace(/0+$/, '');
  else if (prec > 13) hex = hex.padEnd(prec, '0');
  let s =
    '0x' +
    lead.toString(16) +
    (hex.length > 0 ? '.' + hex : '') +
    'p' +
    (exp >= 0 ? '+' : '-') +
    String(Math.abs(exp)).padStart(2, '0');
  if (upper) s = s.toUpperCase();
  return s;
}
