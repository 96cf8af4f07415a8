// Command go-template measures Go text/template render rates for the same queue and exec templates
// as bench/template.ts (parse once, execute many), printing one JSON line: renders per second.
// Standard library only. Usage: go run . <queue-template-file> <exec-template-file> <seconds>
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"text/template"
	"time"
)

// Request mirrors the hive protocol message.
type Request struct {
	Class     string
	Operation string
	Control   map[string][]string
	Data      map[string][]string
}

func copyMap(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = append([]string(nil), v...)
	}
	return out
}

type queueState struct {
	request *Request
	entries []*Request
}

func queueFuncs(st **queueState) template.FuncMap {
	return template.FuncMap{
		"getValues":      func(d map[string][]string, name string) []string { return d[name] },
		"getRequestData": func(r *Request) map[string][]string { return r.Data },
		"getRequest":     func() *Request { return (*st).request },
		"setRequestClass": func(r *Request, c string) string {
			r.Class = c
			return ""
		},
		"setRequestOperation": func(r *Request, o string) string {
			r.Operation = o
			return ""
		},
		"setRequestData": func(r *Request, d map[string][]string) string {
			r.Data = d
			return ""
		},
		"setRequestControl": func(r *Request, c map[string][]string) string {
			r.Control = c
			return ""
		},
		"newRequest": func() *Request {
			return &Request{Control: map[string][]string{}, Data: map[string][]string{}}
		},
		"newData":    func() map[string][]string { return map[string][]string{} },
		"newControl": func() map[string][]string { return map[string][]string{} },
		"addValue": func(m map[string][]string, name string, v interface{}) string {
			switch x := v.(type) {
			case string:
				m[name] = append(m[name], x)
			case []string:
				m[name] = append(m[name], x...)
			default:
				m[name] = append(m[name], fmt.Sprint(x))
			}
			return ""
		},
		"addEntry": func(r *Request) string {
			c := &Request{Class: r.Class, Operation: r.Operation, Control: copyMap(r.Control), Data: copyMap(r.Data)}
			(*st).entries = append((*st).entries, c)
			return ""
		},
	}
}

type execState struct {
	cmd  string
	args []string
}

func execFuncs(st **execState) template.FuncMap {
	return template.FuncMap{
		"setCmd": func(s string) bool {
			(*st).cmd = s
			return true
		},
		"addArg": func(v interface{}) bool {
			switch x := v.(type) {
			case string:
				(*st).args = append((*st).args, x)
			case []string:
				(*st).args = append((*st).args, x...)
			default:
				(*st).args = append((*st).args, fmt.Sprint(x))
			}
			return true
		},
	}
}

func measure(seconds float64, once func()) float64 {
	for i := 0; i < 200; i++ { // warm up
		once()
	}
	n := 0
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		for i := 0; i < 100; i++ {
			once()
		}
		n += 100
	}
	return float64(n) / time.Since(start).Seconds()
}

func main() {
	queueSrc, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	execSrc, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	seconds, err := strconv.ParseFloat(os.Args[3], 64)
	if err != nil {
		panic(err)
	}
	files := make([]string, 20)
	for i := range files {
		files[i] = fmt.Sprintf("/data/file-%02d.txt", i)
	}

	var qs *queueState
	qt := template.Must(template.New("queue").Delims("[[", "]]").Funcs(queueFuncs(&qs)).Parse(string(queueSrc)))
	request := &Request{Class: "queue", Operation: "fanout", Control: map[string][]string{}, Data: map[string][]string{"file": files, "target": {"archive"}}}
	var buf bytes.Buffer
	queueRate := measure(seconds, func() {
		qs = &queueState{request: request}
		buf.Reset()
		if err := qt.ExecuteTemplate(&buf, "fanout", request); err != nil {
			panic(err)
		}
		if len(qs.entries) != len(files) {
			panic("wrong entry count")
		}
	})

	var es *execState
	et := template.Must(template.New("exec").Funcs(execFuncs(&es)).Parse(string(execSrc)))
	data := map[string]interface{}{"Data": map[string][]string{"info": {"first info", "second"}, "operation": {"op1", "op2", "op3"}, "file": files}}
	execRate := measure(seconds, func() {
		es = &execState{}
		buf.Reset()
		if err := et.Execute(&buf, data); err != nil {
			panic(err)
		}
		if es.cmd != "echo" {
			panic("wrong command")
		}
	})
	out, _ := json.Marshal(map[string]float64{"queue": queueRate, "exec": execRate})
	fmt.Println(string(out))
}
