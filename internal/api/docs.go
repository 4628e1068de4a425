package api

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strings"
)

// The API reference at /api/v1/docs is rendered here, on the server, from
// openapi.json with html/template: no script, no CDN, and it cannot drift
// from the document clients download.

type docOp struct {
	Method, Path, Summary, Description, Body string
	Params                                   []docParam
	Responses                                []docResp
	Public                                   bool // no API key (ingestion)
}

type docParam struct{ Name, In, Description string }

// paramJSON is a parameter as the document has it, inline or by reference.
type paramJSON struct {
	Name        string `json:"name"`
	In          string `json:"in"`
	Description string `json:"description"`
	Ref         string `json:"$ref"`
}
type docResp struct{ Status, Description string }

type docView struct {
	Title, Description string
	Groups             []docGroup
	JSONURL            string
}

type docGroup struct {
	Name string
	Ops  []docOp
}

var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Beet</title><link rel="stylesheet" href="docs.css"></head>
<body><main>
<h1>{{.Title}}</h1>
<p>{{.Description}}</p>
<p>The same as an <a href="{{.JSONURL}}">OpenAPI 3 document</a> (for code generators and API clients).</p>
<nav aria-label="Contents"><ul>{{range .Groups}}<li><a href="#{{.Name}}">{{.Name}}</a></li>{{end}}</ul></nav>
{{range .Groups}}<section id="{{.Name}}"><h2>{{.Name}}</h2>
{{range .Ops}}<article class="op">
<h3><span class="m m-{{.Method}}">{{.Method}}</span> <code>{{.Path}}</code>{{if .Public}} <span class="pub">no API key</span>{{end}}</h3>
<p>{{.Summary}}</p>{{if .Description}}<p class="d">{{.Description}}</p>{{end}}
{{if .Params}}<dl>{{range .Params}}<dt><code>{{.Name}}</code> <small>({{.In}})</small></dt><dd>{{.Description}}</dd>{{end}}</dl>{{end}}
{{if .Body}}<p><strong>Body:</strong> <code>{{.Body}}</code></p>{{end}}
<ul class="r">{{range .Responses}}<li><code>{{.Status}}</code> {{.Description}}</li>{{end}}</ul>
</article>{{end}}</section>{{end}}
</main></body></html>`))

const docsCSS = `body{margin:0;font-family:system-ui,sans-serif;line-height:1.45;color:#1d1b1f;background:#f6f5f3}
main{max-width:960px;margin:0 auto;padding:20px}a{color:#7a1f4b}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9rem;overflow-wrap:anywhere}
.op{background:#fff;border:1px solid #dedad6;border-radius:8px;padding:12px 16px;margin:0 0 12px}.op h3{margin:0 0 4px;font-size:1rem}
.m{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;padding:1px 6px;color:#fff;background:#4a4650;font-size:.85rem}
.m-GET{background:#1a4f8a}.m-POST{background:#146c2e}.m-DELETE{background:#a51d2d}.m-PATCH,.m-PUT{background:#8a4b00}
.pub{font-size:.8rem;color:#5b5760}.d{color:#5b5760}dl{margin:4px 0}dd{margin:0 0 4px 16px;color:#5b5760}.r{margin:4px 0;padding-left:18px;color:#5b5760}`

// renderDocs turns the OpenAPI document into the reference page.
func renderDocs(prefix string) ([]byte, error) {
	var doc struct {
		Info  struct{ Title, Description string }
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		return nil, err
	}
	type opJSON struct {
		Summary, Description string
		Tags                 []string
		Security             *[]any
		Parameters           []paramJSON
		RequestBody          *struct {
			Content map[string]struct {
				Schema map[string]any
			}
		}
		Responses map[string]struct {
			Description string `json:"description"`
			Ref         string `json:"$ref"`
		}
	}
	groups := map[string][]docOp{}
	for path, ops := range doc.Paths {
		var shared []docParam
		if raw, ok := ops["parameters"]; ok {
			var ps []paramJSON
			json.Unmarshal(raw, &ps)
			for _, p := range ps {
				shared = append(shared, param(p.Name, p.In, p.Description, p.Ref))
			}
		}
		for method, raw := range ops {
			if method == "parameters" {
				continue
			}
			var o opJSON
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, err
			}
			op := docOp{Method: strings.ToUpper(method), Path: path, Summary: o.Summary, Description: o.Description,
				Params: append([]docParam(nil), shared...), Public: o.Security != nil && len(*o.Security) == 0}
			for _, p := range o.Parameters {
				op.Params = append(op.Params, param(p.Name, p.In, p.Description, p.Ref))
			}
			if o.RequestBody != nil {
				for _, c := range o.RequestBody.Content {
					if ref, ok := c.Schema["$ref"].(string); ok {
						op.Body = refName(ref)
					} else {
						b, _ := json.Marshal(c.Schema)
						op.Body = string(b)
					}
				}
			}
			for status, r := range o.Responses {
				d := r.Description
				if d == "" {
					d = refName(r.Ref)
				}
				op.Responses = append(op.Responses, docResp{status, d})
			}
			sort.Slice(op.Responses, func(i, j int) bool { return op.Responses[i].Status < op.Responses[j].Status })
			group := groupOf(path)
			groups[group] = append(groups[group], op)
		}
	}
	v := docView{Title: doc.Info.Title, Description: doc.Info.Description, JSONURL: prefix + "/api/v1/openapi.json"}
	order := map[string]int{"ingestion": 0, "beets": 1, "channels": 2, "maintenance": 3, "incidents": 4, "account": 5, "this document": 6}
	for name, ops := range groups {
		sort.Slice(ops, func(i, j int) bool {
			if ops[i].Path != ops[j].Path {
				return ops[i].Path < ops[j].Path
			}
			return methodRank(ops[i].Method) < methodRank(ops[j].Method)
		})
		v.Groups = append(v.Groups, docGroup{name, ops})
	}
	sort.Slice(v.Groups, func(i, j int) bool { return order[v.Groups[i].Name] < order[v.Groups[j].Name] })
	var buf bytes.Buffer
	if err := docsPage.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func param(name, in, desc, ref string) docParam {
	if name == "" && ref != "" {
		name, in = refName(ref), "path"
	}
	return docParam{name, in, desc}
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

func methodRank(m string) int {
	return strings.Index("GET POST PUT PATCH DELETE HEAD OPTIONS", m)
}

func groupOf(path string) string {
	switch rest := strings.TrimPrefix(path, "/api/v1/"); {
	case strings.HasPrefix(rest, "beet/"):
		return "ingestion"
	case strings.HasPrefix(rest, "openapi"):
		return "this document"
	default:
		name, _, _ := strings.Cut(rest, "/")
		return name
	}
}

// docsCSP: the page has no script at all; its one stylesheet is its own.
const docsCSP = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *Handler) serveDocs(w http.ResponseWriter, r *http.Request) {
	if h.docs == nil {
		http.Error(w, "API reference unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", docsCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(h.docs)
}

func serveDocsCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write([]byte(docsCSS))
}
