/** Text, trim markers, comments and delimiters. */
import { rows, D } from './types.js';
import type { Group } from './types.js';

export const text: Group = {
  group: 'text',
  cases: rows([
    ['text/plain', 'just text'],
    ['text/empty', ''],
    ['text/newlines', 'a\nb\r\nc\n'],
    ['text/unicode', 'héllo 世界 🎉'],
    ['text/lone-brace', 'a { b } c {x} }}'],
    ['text/action-between', 'a{{.S}}b{{.I}}c', D],
    ['text/adjacent-actions', '{{.S}}{{.S}}', D],
    ['text/multiline-action', '{{\n.S\n}}', D],
    ['text/action-spaces', '{{   .S   }}', D],
    ['text/action-tabs', '{{\t.S\t}}', D],
  ]),
};

export const trim: Group = {
  group: 'trim',
  cases: rows([
    ['trim/left', 'a  \n\t {{- .S}}', D],
    ['trim/right', '{{.S -}}  \n\t b', D],
    ['trim/both', 'a   {{- .S -}}   b', D],
    ['trim/doc-example', '{{23 -}} < {{- 45}}'],
    ['trim/negative-number', '{{-3}}'],
    ['trim/minus-space-number', 'x {{- 3}}'],
    ['trim/number-minus', '{{3 -}} x'],
    ['trim/only-spaces', '   {{- "x" -}}   '],
    ['trim/newline-marker', 'a \n{{-\n.S\n-}}\n b', D],
    ['trim/tab-marker', 'a {{-\t.S\t-}} b', D],
    ['trim/cr-marker', 'a {{-\r.S\r-}} b', D],
    ['trim/stops-at-text', 'a b {{- .S -}} c d', D],
    ['trim/in-range', '{{range .L -}}\n  {{.}}\n{{- end}}', D],
    ['trim/in-if', '{{if .B -}}\n yes \n{{- else -}}\n no \n{{- end}}', D],
    ['trim/empty-text-between', '{{.S -}}   {{- .S}}', D],
    ['trim/no-space-before-dash', 'a {{.S-}} b', D],
    ['trim/comment-both', 'a  {{- /* c */ -}}  b'],
    ['trim/comment-left', 'a  {{- /* c */}}  b'],
    ['trim/comment-right', 'a  {{/* c */ -}}  b'],
    ['trim/all-whitespace-kinds', 'x \t\r\n {{- "|" -}} \t\r\n y'],
    ['trim/unicode-space-kept', 'x\u00a0{{- "|" -}}\u00a0y'],
    ['trim/define-body', '{{define "d" -}}  body  {{- end}}[{{template "d"}}]'],
  ]),
};

export const comments: Group = {
  group: 'comments',
  cases: rows([
    ['comment/simple', 'a{{/* comment */}}b'],
    ['comment/multiline', 'a{{/* line1\nline2 */}}b'],
    ['comment/empty', 'a{{/**/}}b'],
    ['comment/with-delims-inside', 'a{{/* {{.S}} */}}b', D],
    ['comment/in-range', '{{range .L}}{{/* x */}}{{.}}{{end}}', D],
    ['comment/unclosed', 'a{{/* never closed'],
    ['comment/not-at-end', '{{/* x */ 1}}'],
    ['comment/space-before', '{{ /* x */ }}'],
    ['comment/after-text-line', 'line1\nline2{{/* c\n */}}end'],
    ['comment/star-slash-in-string', '{{"*/"}}'],
  ]),
};

export const delims: Group = {
  group: 'delims',
  cases: [
    ...rows(
      [
        ['delims/other-braces-literal', '[[.S]] {{.S}}', D],
        ['delims/value-with-braces', '[[.Delim]] [[.DelimB]]', D],
        ['delims/trim', 'a  [[- .S -]]  b', D],
        ['delims/comment', 'a[[/* c */]]b'],
        ['delims/string-with-close', '[["]]"]]'],
        ['delims/nested-range', '[[range .L]]<[[.]]>[[end]]', D],
      ],
      { delims: ['[[', ']]'], mirror: false },
    ),
    ...rows(
      [
        ['delims/angle', '<%.S%> {{.S}}', D],
        ['delims/angle-trim', 'a <%- .S -%> b', D],
        ['delims/angle-unclosed', 'a <%.S'],
      ],
      { delims: ['<%', '%>'], mirror: false },
    ),
    ...rows([
      ['delims/value-not-reexpanded', '{{.Delim}}|{{printf "%s" .Delim}}', D],
      ['delims/string-constant-with-delims', '{{"{{.S}}"}}', D],
    ]),
  ],
};
