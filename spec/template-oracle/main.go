// Command template-oracle runs every conformance case of cases.json through Go's text/template
// and writes what Go produced (output, and the error text for failing cases) to expected.json.
// Standard library only; run with `go run . cases.json expected.json` from this directory.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/template"
)

// Case is one conformance case (see README.md for the fields).
type Case struct {
	Name       string          `json:"name"`
	Group      string          `json:"group"`
	Template   string          `json:"template"`
	Data       json.RawMessage `json:"data"`
	Delims     []string        `json:"delims"`
	MissingKey string          `json:"missingkey"`
	Exec       *string         `json:"exec"`
	Pre        []string        `json:"pre"`
	Hand       *Result         `json:"hand"`
}

// Result is what one case produced.
type Result struct {
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
	Source string `json:"source,omitempty"`
}

// convert turns JSON numbers into the types the TypeScript engine gives JS numbers:
// whole numbers inside the int64 range are int, everything else float64.
func convert(v interface{}) interface{} {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			panic(err)
		}
		if f == math.Trunc(f) && f < 9.223372036854775807e18 && f >= -9.223372036854775808e18 {
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return int(i)
			}
			return int(f)
		}
		return f
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, e := range x {
			out[i] = convert(e)
		}
		return out
	case map[string]interface{}:
		out := make(map[string]interface{}, len(x))
		for k, e := range x {
			out[k] = convert(e)
		}
		return out
	default:
		return v
	}
}

// testFuncs are also defined, with the same signatures, by the TypeScript conformance spec.
var testFuncs = template.FuncMap{
	"upper": func(s string) string { return strings.ToUpper(s) },
	"add":   func(a, b int) int { return a + b },
	"fail":  func() (string, error) { return "", errors.New("boom") },
	"seq": func(n int) []interface{} {
		out := make([]interface{}, n)
		for i := range out {
			out[i] = i
		}
		return out
	},
	"list": func(args ...interface{}) []interface{} { return args },
	"yes":  func(b bool) string { return strconv.FormatBool(b) },
}

func run(c Case) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res.Error = fmt.Sprintf("panic: %v", r)
		}
	}()
	var data interface{}
	if len(c.Data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(c.Data))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			panic(err)
		}
		data = convert(data)
	}
	t := template.New("t").Funcs(testFuncs)
	if len(c.Delims) == 2 {
		t.Delims(c.Delims[0], c.Delims[1])
	}
	if c.MissingKey != "" {
		t.Option("missingkey=" + c.MissingKey)
	}
	for _, text := range append(append([]string{}, c.Pre...), c.Template) {
		if _, err := t.Parse(text); err != nil {
			return Result{Error: err.Error()}
		}
	}
	var buf bytes.Buffer
	var err error
	if c.Exec != nil {
		err = t.ExecuteTemplate(&buf, *c.Exec, data)
	} else {
		err = t.Execute(&buf, data)
	}
	res.Output = buf.String()
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: template-oracle cases.json expected.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var cases []Case
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	out := make(map[string]Result, len(cases))
	for _, c := range cases {
		if _, dup := out[c.Name]; dup {
			panic("duplicate case name " + c.Name)
		}
		if c.Hand != nil {
			r := *c.Hand
			r.Source = "hand"
			out[c.Name] = r
			continue
		}
		r := run(c)
		r.Source = runtime.Version()
		out[c.Name] = r
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	if err := os.WriteFile(os.Args[2], buf.Bytes(), 0o644); err != nil {
		panic(err)
	}
	fmt.Printf("%d cases written to %s\n", len(out), os.Args[2])
}
