/**
 * A seeded generator of random templates and data, mostly well-formed with deliberate damage
 * mixed in. Used by the fuzz spec (robustness) and, offline, to compare the engine with Go.
 */
import { prng } from '../../prng.js';

export class Gen {
  private readonly rnd: () => number;
  private depth = 0;
  private vars: string[] = [];
  private loops = 0;

  constructor(seed: number) {
    this.rnd = prng(seed);
  }

  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }

  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)] as T;
  }

  chance(p: number): boolean {
    return this.rnd() < p;
  }

  private static readonly NUMBERS = [
    '0',
    '1',
    '-1',
    '2',
    '42',
    '1.5',
    '-2.25',
    '1.0',
    '1e3',
    '0x1F',
    '017',
    '0b101',
    '1_000',
    "'a'",
    "'\\n'",
    '9223372036854775807',
    '0.1',
    '1e21',
    '1e-7',
    '.5',
    '-0.0',
    '255',
    '-255',
    '65',
    '1e6',
    '123456.789',
    '0.000123',
    '5e-324',
    '1.7976931348623157e308',
    "'é'",
    '0x1p-2',
    '-9223372036854775808',
  ];
  private static readonly STRINGS = [
    '"a"',
    '"hello"',
    '""',
    '"%d"',
    '"%v|%s"',
    '"a b"',
    '`raw`',
    '"é"',
    '"<&>"',
    '"x\\ty"',
    '"%5.2f"',
    '"%q"',
    '"%x"',
    '"%[2]d %[1]d"',
    '"%!"',
    '"{{"',
  ];
  private static readonly FIELDS = [
    '.S',
    '.I',
    '.F',
    '.B',
    '.N',
    '.L',
    '.M',
    '.M.a',
    '.M.b',
    '.LM',
    '.E',
    '.Missing',
    '.Nil',
    '.MM.inner',
    '.MM.inner.deep',
    '.Mixed',
    '.Z',
    '.S.X',
    '.L.x',
    '.Nil.x',
  ];
  private static readonly FUNCS = [
    'print',
    'printf',
    'println',
    'len',
    'index',
    'slice',
    'eq',
    'ne',
    'lt',
    'le',
    'gt',
    'ge',
    'and',
    'or',
    'not',
    'html',
    'js',
    'urlquery',
    'call',
  ];

  operand(): string {
    this.depth++;
    try {
      const r = this.int(10);
      if (r < 3) return this.pick(Gen.FIELDS);
      if (r < 4) return this.pick(Gen.NUMBERS);
      if (r < 5) return this.pick(Gen.STRINGS);
      if (r < 6) return this.pick(['true', 'false', 'nil', '.', '$']);
      if (r < 7 && this.vars.length > 0)
        return this.pick(this.vars) + (this.chance(0.3) ? this.pick(['.a', '.X', '.inner']) : '');
      if (r < 9 && this.depth < 4) return '(' + this.pipeline() + ')';
      return this.pick(Gen.FIELDS);
    } finally {
      this.depth--;
    }
  }

  command(): string {
    if (this.chance(0.55)) {
      const f = this.pick(Gen.FUNCS);
      const n = this.int(4);
      const args: string[] = [];
      if (f === 'printf') args.push(this.chance(0.6) ? this.format() : this.pick(Gen.STRINGS));
      for (let i = 0; i < n; i++) args.push(this.operand());
      return [f, ...args].join(' ');
    }
    return this.operand();
  }

  /** A random printf format: flags, width, precision, argument indexes, verbs. */
  format(): string {
    let f = '';
    const n = 1 + this.int(3);
    for (let i = 0; i < n; i++) {
      if (this.chance(0.3)) f += this.pick(['a', ' ', '|', 'é', '%%']);
      f += '%';
      for (let k = this.int(3); k > 0; k--) f += this.pick(['+', '-', '#', ' ', '0']);
      if (this.chance(0.15)) f += '[' + this.pick(['1', '2', '3', '0', 'x']) + ']';
      if (this.chance(0.4)) f += this.pick(['5', '1', '0', '12', '*', '3']);
      if (this.chance(0.3)) f += '.' + this.pick(['', '0', '2', '5', '*', '17']);
      f += this.pick([
        'v',
        'd',
        's',
        'q',
        'x',
        'X',
        'o',
        'O',
        'b',
        'e',
        'E',
        'f',
        'F',
        'g',
        'G',
        't',
        'c',
        'U',
        'T',
        'p',
        'z',
      ]);
    }
    return '"' + f + '"';
  }

  pipeline(): string {
    let p = this.command();
    if (this.chance(0.2))
      p += ' | ' + this.pick(['print', 'len', 'printf "%v"', 'html', 'not', 'and 1', 'or 0', 'index .L', 'eq 1']);
    return p;
  }

  action(): string {
    const lt = this.chance(0.15) ? '{{- ' : '{{';
    const rt = this.chance(0.15) ? ' -}}' : '}}';
    const r = this.int(20);
    if (r < 2 && this.depth < 3) {
      const v = '$v' + this.vars.length;
      this.vars.push(v);
      return `${lt}${v} := ${this.pipeline()}${rt}`;
    }
    if (r < 3 && this.vars.length > 0) return `${lt}${this.pick(this.vars)} = ${this.pipeline()}${rt}`;
    if (r < 6 && this.depth < 3) return this.control();
    if (r < 7 && this.loops > 0) return this.pick(['{{break}}', '{{continue}}']);
    if (r < 8) return '{{/* c */}}';
    return `${lt}${this.pipeline()}${rt}`;
  }

  control(): string {
    this.depth++;
    const saved = this.vars.length;
    try {
      const kind = this.pick(['if', 'with', 'range', 'range', 'template']);
      if (kind === 'template')
        return `{{template "${this.pick(['a', 'b', 'zz'])}"${this.chance(0.5) ? ' ' + this.pipeline() : ''}}}`;
      let head = this.pipeline();
      if (kind === 'range' && this.chance(0.4)) {
        head = `$i${this.depth}, $e${this.depth} := ${head}`;
        this.vars.push(`$i${this.depth}`, `$e${this.depth}`);
      }
      if (kind === 'range') this.loops++;
      let s = `{{${kind} ${head}}}${this.body()}`;
      if (kind === 'range') this.loops--;
      if (this.chance(0.4)) {
        if (kind === 'if' && this.chance(0.4)) s += `{{else if ${this.pipeline()}}}${this.body()}`;
        s += `{{else}}${this.body()}`;
      }
      return s + '{{end}}';
    } finally {
      this.vars.length = saved;
      this.depth--;
    }
  }

  body(): string {
    let s = '';
    const n = 1 + this.int(3);
    for (let i = 0; i < n; i++) s += this.chance(0.4) ? this.pick(['x', ' ', '\n', 'é', '-', '  \n ']) : this.action();
    return s;
  }

  /** A whole template: defines, main body, and sometimes damage. */
  template(): string {
    this.vars = [];
    this.loops = 0;
    let s = '';
    if (this.chance(0.3)) s += `{{define "a"}}${this.body()}{{end}}`;
    if (this.chance(0.2)) s += `{{define "b"}}[{{.}}]{{end}}`;
    s += this.body();
    if (this.chance(0.2)) s += this.body();
    return this.chance(0.15) ? this.damage(s) : s;
  }

  /** Deletes, duplicates or inserts characters to produce malformed input. */
  damage(s: string): string {
    const n = 1 + this.int(3);
    let out = s;
    for (let i = 0; i < n && out.length > 0; i++) {
      const at = this.int(out.length);
      const op = this.int(3);
      if (op === 0) out = out.slice(0, at) + out.slice(at + 1);
      else if (op === 1) out = out.slice(0, at) + out.charAt(at) + out.slice(at);
      else
        out =
          out.slice(0, at) +
          this.pick(['{{', '}}', '"', '(', ')', '|', '$', '.', '`', "'", ':=', '-', '/*']) +
          out.slice(at);
    }
    return out;
  }

  /** Random data of the shape the templates refer to. */
  data(): unknown {
    const scalar = (): unknown => this.pick([0, 1, -3, 2.5, 'str', '', true, false, null, 'é<&>']);
    const mk = (): Record<string, unknown> => ({
      a: scalar(),
      b: scalar(),
      inner: this.chance(0.5) ? { deep: scalar() } : scalar(),
    });
    if (this.chance(0.05)) return scalar();
    return {
      S: this.pick(['hello', '', 'é世']),
      I: this.pick([0, 1, 42, -7]),
      F: this.pick([1.5, -0.25, 1e21, 0.1]),
      B: this.chance(0.5),
      N: null,
      E: '',
      Z: 0,
      L: this.pick([['a', 'b', 'c'], [], [1, 2, 3], [null, 'x']]),
      M: mk(),
      LM: [mk(), mk()],
      MM: { inner: mk() },
      Mixed: [1, 'two', 2.5, true, null, [1], { k: 'v' }],
      Nil: null,
    };
  }
}
