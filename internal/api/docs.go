package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The API reference at /api/v1/docs is rendered here, on the server, from
// openapi.json with html/template: no script, no CDN, and it cannot drift
// from the document clients download.

type docOp struct {
	Method, Path, Summary string
	Description           template.HTML
	Params                []docParam
	Bodies                []docBody // one per content type
	Responses             []docResp
	Public                bool // no API key (ingestion)
}

type docParam struct {
	Name, In, Type string
	Required       bool
	Description    template.HTML
}

// paramJSON is a parameter as the document has it, inline or by reference.
type paramJSON struct {
	Name        string      `json:"name"`
	In          string      `json:"in"`
	Description string      `json:"description"`
	Required    bool        `json:"required"`
	Schema      *schemaJSON `json:"schema"`
	Ref         string      `json:"$ref"`
}

type docResp struct {
	Status      string
	Description template.HTML
}

// docBody is what to send: the fields of an object body, flattened
// ("detection.mode"), or the type of any other, and an example.
type docBody struct {
	ContentType, Schema string
	Type, Limits        string // a body that is not an object
	Fields              []docField
	Example             string
}

type docField struct {
	Name, Type, Limits, Example string
	Required                    bool
	Description                 template.HTML
}

type docView struct {
	Title       string
	Description template.HTML
	Groups      []docGroup
	JSONURL     string
	Dashboard   string // the dashboard's home
	Keys        string // where API keys are made
}

type docGroup struct {
	Name string
	Ops  []docOp
}

// schemaJSON is the part of an OpenAPI 3.0 schema the reference shows.
type schemaJSON struct {
	Ref                  string          `json:"$ref"`
	Type                 string          `json:"type"`
	Format               string          `json:"format"`
	Description          string          `json:"description"`
	Enum                 []any           `json:"enum"`
	Default              json.RawMessage `json:"default"`
	Example              json.RawMessage `json:"example"`
	Minimum              *float64        `json:"minimum"`
	Maximum              *float64        `json:"maximum"`
	MinLength            *int            `json:"minLength"`
	MaxLength            *int            `json:"maxLength"`
	MaxItems             *int            `json:"maxItems"`
	Pattern              string          `json:"pattern"`
	Nullable             bool            `json:"nullable"`
	Required             []string        `json:"required"`
	Properties           props           `json:"properties"`
	Items                *schemaJSON     `json:"items"`
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
}

// props keeps an object's properties in the document's order.
type props []prop

type prop struct {
	Name   string
	Schema *schemaJSON
}

func (p *props) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var s schemaJSON
		if err := dec.Decode(&s); err != nil {
			return err
		}
		*p = append(*p, prop{Name: t.(string), Schema: &s})
	}
	return nil
}

var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Beet</title><link rel="stylesheet" href="docs.css"></head>
<body><header class="top"><a href="{{.Dashboard}}">← Beet dashboard</a> <a href="{{.Keys}}">API keys</a> <a href="{{.JSONURL}}">openapi.json</a></header>
<main>
<h1>{{.Title}}</h1>
<p>{{.Description}}</p>
<p>Make a key on the dashboard's <a href="{{.Keys}}">Account page, under API keys</a> (or <code>beet apikeys create --account 1</code>). The same as an <a href="{{.JSONURL}}">OpenAPI 3 document</a> (for code generators and API clients).</p>
<nav aria-label="Contents"><ul>{{range .Groups}}<li><a href="#{{.Name}}">{{.Name}}</a></li>{{end}}</ul></nav>
{{range .Groups}}<section id="{{.Name}}"><h2>{{.Name}}</h2>
{{range .Ops}}<article class="op">
<h3><span class="m m-{{.Method}}">{{.Method}}</span> <code>{{.Path}}</code>{{if .Public}} <span class="pub">no API key</span>{{end}}</h3>
<p>{{.Summary}}</p>{{if .Description}}<p class="d">{{.Description}}</p>{{end}}
{{if .Params}}<p><strong>Parameters</strong></p><dl>{{range .Params}}<dt><code>{{.Name}}</code> <small>({{.In}}{{if .Type}}, {{.Type}}{{end}}{{if .Required}}, required{{end}})</small></dt><dd>{{.Description}}</dd>{{end}}</dl>{{end}}
{{range .Bodies}}<div class="body"><p><strong>Body</strong> <code>{{.ContentType}}</code>{{if .Type}}: {{.Type}}{{if .Limits}}, {{.Limits}}{{end}}{{end}}</p>
{{if .Fields}}<div class="scroll"><table><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Limits</th><th scope="col">Example</th><th scope="col">Description</th></tr></thead><tbody>
{{range .Fields}}<tr><td><code>{{.Name}}</code>{{if .Required}} <small class="req">required</small>{{end}}</td><td>{{.Type}}</td><td>{{.Limits}}</td><td>{{if .Example}}<code>{{.Example}}</code>{{end}}</td><td>{{.Description}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{if .Example}}<p class="ex">Example:</p><pre><code>{{.Example}}</code></pre>{{end}}</div>{{end}}
<ul class="r">{{range .Responses}}<li><code>{{.Status}}</code> {{.Description}}</li>{{end}}</ul>
</article>{{end}}</section>{{end}}
</main></body></html>`))

const docsCSS = `body{margin:0;font-family:system-ui,sans-serif;line-height:1.45;color:#1d1b1f;background:#f6f5f3}
.top{display:flex;flex-wrap:wrap;gap:16px;padding:10px 20px;background:#fff;border-bottom:1px solid #dedad6}
main{max-width:960px;margin:0 auto;padding:20px}a{color:#7a1f4b}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9rem;overflow-wrap:anywhere}
.op{background:#fff;border:1px solid #dedad6;border-radius:8px;padding:12px 16px;margin:0 0 12px}.op h3{margin:0 0 4px;font-size:1rem}
.m{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;padding:1px 6px;color:#fff;background:#4a4650;font-size:.85rem}
.m-GET{background:#1a4f8a}.m-POST{background:#146c2e}.m-DELETE{background:#a51d2d}.m-PATCH,.m-PUT{background:#8a4b00}
.pub{font-size:.8rem;color:#5b5760}.d{color:#5b5760}dl{margin:4px 0}dd{margin:0 0 4px 16px;color:#5b5760}.r{margin:4px 0;padding-left:18px;color:#5b5760}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.9rem;width:100%}th,td{text-align:left;vertical-align:top;padding:4px 8px;border-top:1px solid #ece9e6}
.req{color:#a51d2d}pre{background:#f6f5f3;border-radius:6px;padding:8px 12px;overflow-x:auto}.ex{margin:8px 0 0}`

// renderDocs turns the OpenAPI document into the reference page; prefix
// is the base URL's path, before every link.
func renderDocs(prefix string) ([]byte, error) {
	var doc struct {
		Info       struct{ Title, Description string }
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas    map[string]*schemaJSON
			Parameters map[string]paramJSON
			Responses  map[string]struct{ Description string }
		}
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		return nil, err
	}
	d := &docSchemas{doc.Components.Schemas}
	type opJSON struct {
		Summary, Description string
		Tags                 []string
		Security             *[]any
		Parameters           []paramJSON
		RequestBody          *struct {
			Content map[string]struct {
				Schema *schemaJSON
			}
		}
		Responses map[string]struct {
			Description string `json:"description"`
			Ref         string `json:"$ref"`
		}
	}
	param := func(p paramJSON) docParam {
		if p.Ref != "" {
			p = doc.Components.Parameters[refName(p.Ref)]
		}
		dp := docParam{Name: p.Name, In: p.In, Required: p.Required, Description: markdown(p.Description)}
		if p.Schema != nil {
			dp.Type = joinNonEmpty(", ", "", d.typeOf(p.Schema), d.limits(d.resolve(p.Schema)))
		}
		return dp
	}
	groups := map[string][]docOp{}
	for path, ops := range doc.Paths {
		var shared []docParam
		if raw, ok := ops["parameters"]; ok {
			var ps []paramJSON
			if err := json.Unmarshal(raw, &ps); err != nil {
				return nil, err
			}
			for _, p := range ps {
				shared = append(shared, param(p))
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
			op := docOp{Method: strings.ToUpper(method), Path: path, Summary: o.Summary, Description: markdown(o.Description),
				Params: append([]docParam(nil), shared...), Public: o.Security != nil && len(*o.Security) == 0}
			for _, p := range o.Parameters {
				op.Params = append(op.Params, param(p))
			}
			if o.RequestBody != nil {
				for ct, c := range o.RequestBody.Content {
					op.Bodies = append(op.Bodies, d.body(ct, c.Schema))
				}
				sort.Slice(op.Bodies, func(i, j int) bool { return op.Bodies[i].ContentType < op.Bodies[j].ContentType })
			}
			for status, r := range o.Responses {
				desc := r.Description
				if desc == "" {
					desc = doc.Components.Responses[refName(r.Ref)].Description
				}
				op.Responses = append(op.Responses, docResp{status, markdown(desc)})
			}
			sort.Slice(op.Responses, func(i, j int) bool { return op.Responses[i].Status < op.Responses[j].Status })
			group := groupOf(path)
			groups[group] = append(groups[group], op)
		}
	}
	v := docView{Title: doc.Info.Title, Description: markdown(doc.Info.Description), JSONURL: prefix + "/api/v1/openapi.json",
		Dashboard: prefix + "/", Keys: prefix + "/account#keys"}
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

// docSchemas describes schemas, following references into the
// document's components.
type docSchemas struct{ byName map[string]*schemaJSON }

// resolve follows s's reference, if it has one.
func (d *docSchemas) resolve(s *schemaJSON) *schemaJSON {
	for range 8 { // references to references, but never a loop forever
		if s == nil || s.Ref == "" {
			return s
		}
		if r := d.byName[refName(s.Ref)]; r != nil {
			s = r
		} else {
			return s
		}
	}
	return s
}

// body describes one request body.
func (d *docSchemas) body(contentType string, s *schemaJSON) docBody {
	b := docBody{ContentType: contentType}
	if s != nil && s.Ref != "" {
		b.Schema = refName(s.Ref)
	}
	r := d.resolve(s)
	if r == nil {
		return b
	}
	var pretty bytes.Buffer
	if len(r.Example) > 0 && json.Indent(&pretty, r.Example, "", "  ") == nil {
		b.Example = pretty.String() // in the document's order
	}
	if r.Type != "object" || len(r.Properties) == 0 {
		b.Type, b.Limits = d.typeOf(s), d.limits(r)
		return b
	}
	b.Fields = d.fields(r, "", r.Example, 0)
	if b.Example == "" {
		out, _ := json.MarshalIndent(d.synth(r, 0), "", "  ")
		b.Example = string(out)
	}
	return b
}

// fields flattens an object's properties, nested objects as "a.b", with
// each field's example taken from the body's example where it has one.
func (d *docSchemas) fields(s *schemaJSON, prefix string, example json.RawMessage, depth int) []docField {
	var out []docField
	var ex map[string]json.RawMessage
	json.Unmarshal(example, &ex) // none, or not an object: no examples
	for _, p := range s.Properties {
		r := d.resolve(p.Schema)
		f := docField{Name: prefix + p.Name, Type: d.typeOf(p.Schema), Limits: d.limits(r),
			Required: slices.Contains(s.Required, p.Name)}
		desc := p.Schema.Description
		if desc == "" {
			desc = r.Description
		}
		f.Description = markdown(desc)
		var compact bytes.Buffer
		if v, ok := ex[p.Name]; ok && json.Compact(&compact, v) == nil && compact.Len() <= 120 {
			f.Example = compact.String()
		} else if len(r.Example) > 0 {
			f.Example = string(r.Example)
		}
		out = append(out, f)
		if r.Type == "object" && len(r.Properties) > 0 && depth < 2 {
			out = append(out, d.fields(r, f.Name+".", ex[p.Name], depth+1)...)
		}
	}
	return out
}

// typeOf names a schema's type: "string (date-time)", "array of integer",
// "object", with "or null" where null is allowed.
func (d *docSchemas) typeOf(s *schemaJSON) string {
	r := d.resolve(s)
	if r == nil {
		return ""
	}
	t := r.Type
	switch {
	case t == "array" && r.Items != nil:
		t = "array of " + d.typeOf(r.Items)
	case r.Format != "" && r.Format != "int64" && r.Format != "int32":
		t += " (" + r.Format + ")"
	case t == "" && len(r.Properties) > 0:
		t = "object"
	}
	if r.Nullable {
		t += " or null"
	}
	return t
}

// limits says what a value may be, in words.
func (d *docSchemas) limits(s *schemaJSON) string {
	if s == nil {
		return ""
	}
	var out []string
	if len(s.Enum) > 0 {
		var vs []string
		for _, e := range s.Enum {
			vs = append(vs, fmt.Sprint(e))
		}
		out = append(out, "one of "+strings.Join(vs, ", "))
	}
	out = append(out, between(s.MinLength, s.MaxLength, "characters"))
	out = append(out, rangeOf(s.Minimum, s.Maximum))
	if s.MaxItems != nil {
		out = append(out, fmt.Sprintf("at most %d items", *s.MaxItems))
	}
	if s.Items != nil {
		if l := d.limits(d.resolve(s.Items)); l != "" {
			out = append(out, "each "+l)
		}
	}
	if s.Pattern != "" {
		out = append(out, "matching "+s.Pattern)
	}
	if len(s.Default) > 0 {
		out = append(out, "default "+string(s.Default))
	}
	return joinNonEmpty("; ", "", out...)
}

// synth makes an example body from the required fields and those with an
// example, when the schema has none: enough to see its shape.
func (d *docSchemas) synth(s *schemaJSON, depth int) any {
	r := d.resolve(s)
	switch {
	case r == nil:
		return nil
	case len(r.Example) > 0:
		var v any
		json.Unmarshal(r.Example, &v)
		return v
	case len(r.Enum) > 0:
		return r.Enum[0]
	case r.Type == "object" && depth < 3:
		m := map[string]any{}
		for _, p := range r.Properties {
			if slices.Contains(r.Required, p.Name) || len(d.resolve(p.Schema).Example) > 0 {
				m[p.Name] = d.synth(p.Schema, depth+1)
			}
		}
		return m
	case r.Type == "array":
		return []any{}
	case r.Type == "integer" || r.Type == "number":
		if r.Minimum != nil {
			return *r.Minimum
		}
		return 0
	case r.Type == "boolean":
		return false
	}
	return "…"
}

func between(lo, hi *int, unit string) string {
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return fmt.Sprintf("exactly %d %s", *lo, unit)
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d %s", *lo, *hi, unit)
	case hi != nil:
		return fmt.Sprintf("at most %d %s", *hi, unit)
	case lo != nil:
		return fmt.Sprintf("at least %d %s", *lo, unit)
	}
	return ""
}

func rangeOf(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return number(*lo) + " to " + number(*hi)
	case hi != nil:
		return "at most " + number(*hi)
	case lo != nil:
		return "at least " + number(*lo)
	}
	return ""
}

// number writes 31536000 as such, not as 3.1536e+07.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// joinNonEmpty joins the parts that are not empty, after lead when there
// are any.
func joinNonEmpty(sep, lead string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return lead + strings.Join(keep, sep)
}

// The document's prose is markdown: `code`, **strong** and [links](url).
var (
	strongMD = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	linkMD   = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
)

// markdown renders the document's inline markdown as HTML, escaping the
// rest; a backtick without its pair stays a backtick.
func markdown(s string) template.HTML {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		n := len(parts)
		parts = append(parts[:n-2], parts[n-2]+"`"+parts[n-1])
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
			continue
		}
		e := strongMD.ReplaceAllString(template.HTMLEscapeString(p), "<strong>$1</strong>")
		e = linkMD.ReplaceAllStringFunc(e, func(m string) string {
			sub := linkMD.FindStringSubmatch(m)
			if u := sub[2]; strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "#") {
				return `<a href="` + u + `">` + sub[1] + `</a>`
			}
			return m
		})
		b.WriteString(e)
	}
	return template.HTML(b.String())
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

func methodRank(m string) int {
	return strings.Index("GET POST PUT PATCH DELETE HEAD OPTIONS", m)
}

func groupOf(path string) string {
	switch rest := strings.TrimPrefix(path, "/api/v1/"); {
	case strings.HasPrefix(rest, "beet/"), strings.HasPrefix(path, "/ping/"):
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
