package deploy_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/beethq/beet/internal/config"
)

// decodeAll reads every YAML document of path into generic maps.
func decodeAll(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if err != nil {
			if err.Error() == "EOF" {
				return docs
			}
			t.Fatalf("%s: %v", path, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

// at walks a decoded YAML value by map keys and list indexes ("0").
func at(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any, path ...string) string { s, _ := at(v, path...).(string); return s }

func labels(v any, path ...string) map[string]string {
	out := map[string]string{}
	m, _ := at(v, path...).(map[string]any)
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

// subset reports whether every pair of sel is in lbl: a selector matches.
func subset(sel, lbl map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if lbl[k] != v {
			return false
		}
	}
	return true
}

// knownSetting reports whether name is a BEET_* variable Beet reads:
// every one has a flag of the same name in config.Bind.
func knownSetting(name string) bool {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	config.Bind(fs, func(string) string { return "" })
	f := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "BEET_"), "_", "-"))
	if fs.Lookup(f) != nil {
		return true
	}
	// Added by issue 15's ops branch (admin listener); drop once merged.
	return name == "BEET_METRICS_LISTEN"
}

func TestKubernetesManifests(t *testing.T) {
	kust := decodeAll(t, "kubernetes/kustomization.yaml")[0]
	var objs []map[string]any
	for _, r := range at(kust, "resources").([]any) {
		objs = append(objs, decodeAll(t, filepath.Join("kubernetes", r.(string)))...)
	}
	byKind := map[string][]map[string]any{}
	for _, o := range objs {
		if str(o, "apiVersion") == "" || str(o, "metadata", "name") == "" {
			t.Fatalf("object without apiVersion or name: %v", o)
		}
		byKind[str(o, "kind")] = append(byKind[str(o, "kind")], o)
	}
	for kind, n := range map[string]int{"Deployment": 1, "StatefulSet": 1, "Service": 1, "HorizontalPodAutoscaler": 1,
		"PodDisruptionBudget": 2, "ConfigMap": 1, "Secret": 1, "Namespace": 1} {
		if len(byKind[kind]) != n {
			t.Errorf("%d %s objects, want %d", len(byKind[kind]), kind, n)
		}
	}
	names := func(kind string) []string {
		var out []string
		for _, o := range byKind[kind] {
			out = append(out, str(o, "metadata", "name"))
		}
		return out
	}
	for _, cm := range append(byKind["ConfigMap"], byKind["Secret"]...) {
		data, _ := at(cm, "data").(map[string]any)
		if data == nil {
			data, _ = at(cm, "stringData").(map[string]any)
		}
		for k := range data {
			if !knownSetting(k) {
				t.Errorf("%s %s sets %s, which Beet does not read", str(cm, "kind"), str(cm, "metadata", "name"), k)
			}
		}
	}

	roles := map[string]map[string]any{}
	var images []string
	for _, d := range append(byKind["Deployment"], byKind["StatefulSet"]...) {
		name := str(d, "metadata", "name")
		sel := labels(d, "spec", "selector", "matchLabels")
		pod := labels(d, "spec", "template", "metadata", "labels")
		if !subset(sel, pod) {
			t.Errorf("%s: selector %v does not match its pod labels %v", name, sel, pod)
		}
		if at(d, "spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
			t.Errorf("%s: pods may run as root", name)
		}
		c := at(d, "spec", "template", "spec", "containers", "0")
		images = append(images, str(c, "image"))
		args := at(c, "args").([]any)
		if len(args) != 3 || args[0] != "serve" || args[1] != "--role" {
			t.Fatalf("%s: args %v, want serve --role ROLE", name, args)
		}
		role := args[2].(string)
		roles[role] = d
		if pod["app.kubernetes.io/component"] != role {
			t.Errorf("%s runs role %s but its pods are labelled %q", name, role, pod["app.kubernetes.io/component"])
		}
		ports := map[string]bool{}
		for _, p := range at(c, "ports").([]any) {
			ports[str(p, "name")] = true
		}
		for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz", "startupProbe": "/healthz"} {
			if got := str(c, probe, "httpGet", "path"); got != path {
				t.Errorf("%s: %s path %q, want %q", name, probe, got, path)
			}
			if port := str(c, probe, "httpGet", "port"); !ports[port] {
				t.Errorf("%s: %s on port %q, which the container does not declare", name, probe, port)
			}
		}
		for _, ref := range at(c, "envFrom").([]any) {
			if n := str(ref, "configMapRef", "name"); n != "" && !slices.Contains(names("ConfigMap"), n) {
				t.Errorf("%s: ConfigMap %q does not exist", name, n)
			}
			if n := str(ref, "secretRef", "name"); n != "" && !slices.Contains(names("Secret"), n) {
				t.Errorf("%s: Secret %q does not exist", name, n)
			}
		}
		if at(c, "securityContext", "readOnlyRootFilesystem") != true || at(c, "securityContext", "allowPrivilegeEscalation") != false {
			t.Errorf("%s: container security context is not locked down", name)
		}
	}
	if roles["ingest"] == nil || roles["worker"] == nil {
		t.Fatalf("want one workload per role (ingest, worker), got %v", slices.Collect(mapKeys(roles)))
	}
	// The spool must outlive the pod: pings acknowledged during a database
	// outage wait in it. So the ingest pods are a StatefulSet whose spool
	// directory is a claim of their own, never an emptyDir.
	ingest := roles["ingest"]
	if str(ingest, "kind") != "StatefulSet" {
		t.Errorf("ingest runs as a %s, want a StatefulSet (a spool per pod on a persistent volume)", str(ingest, "kind"))
	}
	spoolDir := path.Dir(str(byKind["ConfigMap"][0], "data", "BEET_SPOOL_PATH"))
	var spoolVolume string
	for _, m := range at(ingest, "spec", "template", "spec", "containers", "0", "volumeMounts").([]any) {
		if str(m, "mountPath") == spoolDir {
			spoolVolume = str(m, "name")
		}
	}
	claimed := false
	if claims, ok := at(ingest, "spec", "volumeClaimTemplates").([]any); ok {
		for _, c := range claims {
			claimed = claimed || str(c, "metadata", "name") == spoolVolume
		}
	}
	if spoolVolume == "" || !claimed {
		t.Errorf("ingest: the spool directory %s is not on a volumeClaimTemplate (mount %q)", spoolDir, spoolVolume)
	}
	if images[0] == "" || slices.ContainsFunc(images, func(i string) bool { return i != images[0] }) {
		t.Errorf("Deployments run different images: %v", images)
	}

	svc := byKind["Service"][0]
	ingestPods := labels(roles["ingest"], "spec", "template", "metadata", "labels")
	workerPods := labels(roles["worker"], "spec", "template", "metadata", "labels")
	if sel := labels(svc, "spec", "selector"); !subset(sel, ingestPods) || subset(sel, workerPods) {
		t.Errorf("Service selector %v must select the ingest pods and not the workers", sel)
	}
	hpa := byKind["HorizontalPodAutoscaler"][0]
	if str(hpa, "spec", "scaleTargetRef", "name") != str(roles["ingest"], "metadata", "name") ||
		str(hpa, "spec", "scaleTargetRef", "kind") != str(roles["ingest"], "kind") {
		t.Errorf("HPA targets %v, want the ingest StatefulSet", at(hpa, "spec", "scaleTargetRef"))
	}
	for _, pdb := range byKind["PodDisruptionBudget"] {
		sel := labels(pdb, "spec", "selector", "matchLabels")
		n := 0
		for _, d := range roles {
			if subset(sel, labels(d, "spec", "template", "metadata", "labels")) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("PDB %s selects the pods of %d workloads, want 1", str(pdb, "metadata", "name"), n)
		}
	}
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		if out, err := exec.Command(kubectl, "kustomize", "kubernetes").CombinedOutput(); err != nil {
			t.Errorf("kubectl kustomize: %v\n%s", err, out)
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestCompose(t *testing.T) {
	doc := decodeAll(t, "compose/compose.yaml")[0]
	services, _ := at(doc, "services").(map[string]any)
	var beets []string
	for name, s := range services {
		if str(s, "build", "dockerfile") == "deploy/Dockerfile" {
			beets = append(beets, name)
		}
	}
	if len(beets) != 2 {
		t.Fatalf("%d Beet services, want 2: %v", len(beets), beets)
	}
	for _, want := range []string{"postgres", "redis", "proxy"} {
		if services[want] == nil {
			t.Errorf("no %s service", want)
		}
	}
	for _, name := range beets {
		s := services[name]
		env, _ := at(s, "environment").(map[string]any)
		for k := range env {
			if !knownSetting(k) {
				t.Errorf("%s sets %s, which Beet does not read", name, k)
			}
		}
		if db, _ := env["BEET_DATABASE_URL"].(string); !strings.HasPrefix(db, "postgres://") || !strings.Contains(db, "@postgres:") {
			t.Errorf("%s: BEET_DATABASE_URL %q is not the postgres service", name, db)
		}
		if r, _ := env["BEET_REDIS_URL"].(string); !strings.HasPrefix(r, "redis://redis:") {
			t.Errorf("%s: BEET_REDIS_URL %q is not the redis service", name, r)
		}
		for _, dep := range []string{"postgres", "redis"} {
			if str(s, "depends_on", dep, "condition") != "service_healthy" {
				t.Errorf("%s does not wait for %s to be healthy", name, dep)
			}
			if at(services[dep], "healthcheck", "test") == nil {
				t.Errorf("%s has no health check for %s to wait on", dep, name)
			}
		}
		if str(s, "image") != str(services[beets[0]], "image") {
			t.Errorf("the Beet services run different images")
		}
	}
	// Every volume a service mounts by name is declared.
	vols, _ := at(doc, "volumes").(map[string]any)
	for name, s := range services {
		list, _ := at(s, "volumes").([]any)
		for _, v := range list {
			src, _, _ := strings.Cut(v.(string), ":")
			if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := vols[src]; !ok {
					t.Errorf("%s mounts volume %q, which is not declared", name, src)
				}
			}
		}
	}
	// The compose tool, where one works here, must accept the file too.
	checked := false
	for _, tool := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if exec.Command(tool[0], append(tool[1:], "version")...).Run() != nil {
			continue // not installed, or docker without its compose plugin
		}
		checked = true
		args := append(tool[1:], "-f", "compose/compose.yaml", "config", "-q")
		if out, err := exec.Command(tool[0], args...).CombinedOutput(); err != nil {
			t.Errorf("%s config: %v\n%s", strings.Join(tool, " "), err, out)
		}
	}
	if !checked {
		t.Log("no docker compose here: checked the structure only")
	}
}

// unit reads a systemd unit file into section → key → values.
func unit(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: bad line %q", path, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

func TestSystemdUnit(t *testing.T) {
	u := unit(t, "systemd/beet.service")
	svc := u["Service"]
	for k, want := range map[string]string{
		"DynamicUser": "yes", "ProtectSystem": "strict", "StateDirectory": "beet", "NoNewPrivileges": "yes",
		"ProtectHome": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "",
		"RestrictSUIDSGID": "yes", "MemoryDenyWriteExecute": "yes", "ExecStart": "/usr/local/bin/beet serve",
	} {
		if got := svc[k]; len(got) != 1 || got[0] != want {
			t.Errorf("[Service] %s = %q, want %q", k, got, want)
		}
	}
	// The database must live in the state directory: the rest is read-only.
	var dbURL string
	for _, e := range svc["Environment"] {
		if v, ok := strings.CutPrefix(e, "BEET_DATABASE_URL="); ok {
			dbURL = v
		}
	}
	if !strings.HasPrefix(dbURL, "sqlite:///var/lib/beet/") {
		t.Errorf("BEET_DATABASE_URL %q is outside the state directory /var/lib/beet", dbURL)
	}
	if u["Install"]["WantedBy"][0] != "multi-user.target" {
		t.Errorf("WantedBy %v", u["Install"]["WantedBy"])
	}
	// The example environment file sets only variables Beet reads.
	env, err := os.ReadFile("systemd/beet.env")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(env), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "#")
		if k, _, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "BEET_") && !knownSetting(k) {
			t.Errorf("beet.env names %s, which Beet does not read", k)
		}
	}

	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: checked the keys only")
		return
	}
	// verify wants ExecStart to exist: point it at this test binary.
	self, _ := os.Executable()
	b, _ := os.ReadFile("systemd/beet.service")
	path := filepath.Join(t.TempDir(), "beet.service")
	os.WriteFile(path, bytes.ReplaceAll(b, []byte("/usr/local/bin/beet"), []byte(self)), 0o644)
	if out, err := exec.Command(sa, "verify", path).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err := exec.Command(sa, "security", "--offline=yes", "--threshold=20", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: exposure above 2.0 on its 0-10 scale (or an error): %v\n%s", err, out)
	}
}

// TestDockerfile checks the Dockerfile's structure; no daemon is needed.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines, drop comments, split into instructions.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	type instr struct{ op, args string }
	var stages [][]instr
	stageNames := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, args, _ := strings.Cut(line, " ")
		op = strings.ToUpper(op)
		if op == "FROM" {
			stages = append(stages, nil)
			if f := strings.Fields(args); len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stageNames[f[2]] = true
			}
		}
		if len(stages) == 0 {
			if op != "ARG" {
				t.Fatalf("%s before the first FROM", op)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], instr{op, strings.TrimSpace(args)})
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a multi-stage build", len(stages))
	}
	has := func(st []instr, op, substr string) bool {
		return slices.ContainsFunc(st, func(i instr) bool { return i.op == op && strings.Contains(i.args, substr) })
	}
	if !slices.ContainsFunc(stages[:len(stages)-1], func(st []instr) bool { return has(st, "RUN", "CGO_ENABLED=0 go build") }) {
		t.Error("no build stage runs CGO_ENABLED=0 go build: the binary would not be static")
	}
	final := stages[len(stages)-1]
	var user, bin string
	for _, i := range final {
		switch i.op {
		case "USER":
			user = i.args
		case "COPY":
			f := strings.Fields(i.args)
			for _, a := range f {
				if from, ok := strings.CutPrefix(a, "--from="); ok && !stageNames[from] {
					t.Errorf("COPY --from=%s names no stage", from)
				}
			}
			if strings.HasSuffix(f[len(f)-2], "/beet") {
				bin = f[len(f)-1]
			}
		}
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("final stage runs as %q; want a non-root user", user)
	}
	if bin == "" {
		t.Fatal("the final stage copies no beet binary")
	}
	for op, want := range map[string]string{
		"HEALTHCHECK": `CMD ["` + bin + `", "healthcheck"]`,
		"ENTRYPOINT":  `["` + bin + `"]`,
		"VOLUME":      "/var/lib/beet",
		"ENV":         "BEET_DATABASE_URL=sqlite:///var/lib/beet/",
		"EXPOSE":      "8080",
	} {
		if !has(final, op, want) {
			t.Errorf("final stage has no %s %s", op, want)
		}
	}
}

// TestReverseProxies checks the proxy examples with the proxies themselves
// where they are installed (apt-get install nginx-light caddy).
func TestReverseProxies(t *testing.T) {
	for _, f := range []string{"proxy/nginx.conf", "proxy/Caddyfile", "compose/Caddyfile"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"/readyz", "/metrics"} {
			if strings.HasSuffix(f, "nginx.conf") && want == "/readyz" {
				continue // open-source nginx has no active health checks
			}
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s does not mention %s", f, want)
			}
		}
	}
	t.Run("nginx", func(t *testing.T) {
		nginx, err := exec.LookPath("nginx")
		if err != nil {
			t.Skip("nginx not installed (apt-get install nginx-light)")
		}
		dir := t.TempDir()
		cert, key := selfSigned(t, dir)
		b, _ := os.ReadFile("proxy/nginx.conf")
		conf := strings.NewReplacer(
			"/etc/letsencrypt/live/beet.example.com/fullchain.pem", cert,
			"/etc/letsencrypt/live/beet.example.com/privkey.pem", key).Replace(string(b))
		os.WriteFile(filepath.Join(dir, "beet.conf"), []byte(conf), 0o644)
		main := fmt.Sprintf("pid %[1]s/nginx.pid;\nerror_log %[1]s/error.log;\nevents {}\nhttp {\n access_log off;\n include %[1]s/beet.conf;\n}\n", dir)
		os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644)
		out, err := exec.Command(nginx, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf")).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("test is successful")) {
			t.Fatalf("nginx -t: %v\n%s", err, out)
		}
	})
	t.Run("caddy", func(t *testing.T) {
		caddy, err := exec.LookPath("caddy")
		if err != nil {
			t.Skip("caddy not installed (apt-get install caddy)")
		}
		for _, f := range []string{"proxy/Caddyfile", "compose/Caddyfile"} {
			// adapt parses and type-checks without starting anything.
			out, err := exec.Command(caddy, "adapt", "--config", f, "--adapter", "caddyfile").CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte(`"reverse_proxy"`)) {
				t.Errorf("caddy adapt %s: %v\n%s", f, err, out)
			}
		}
	})
}

func selfSigned(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "beet.example.com"},
		DNSNames: []string{"beet.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(priv)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certPath, keyPath
}

// TestReleaseScript runs deploy/release.sh for every target. It cross-
// compiles four binaries (minutes on a small machine), so it runs only with
// BEET_TEST_RELEASE=1.
func TestReleaseScript(t *testing.T) {
	if os.Getenv("BEET_TEST_RELEASE") == "" {
		t.Skip("set BEET_TEST_RELEASE=1 to build the four release archives")
	}
	out := t.TempDir()
	cmd := exec.Command("./release.sh", "0.0.0-test")
	cmd.Env = append(os.Environ(), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, b)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		name := "beet_0.0.0-test_" + target + ".tar.gz"
		if !bytes.Contains(sums, []byte("  "+name+"\n")) {
			t.Errorf("SHA256SUMS lacks %s:\n%s", name, sums)
		}
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	// The checksums match the files, as a downloader would check them.
	check := exec.Command("sha256sum", "--check", "SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum --check: %v\n%s", err, b)
	}
	// The linux/amd64 binary runs here and is static.
	x := exec.Command("tar", "-xzf", "beet_0.0.0-test_linux_amd64.tar.gz")
	x.Dir = out
	if b, err := x.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, b)
	}
	bin := filepath.Join(out, "beet_0.0.0-test_linux_amd64", "beet")
	v, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !bytes.Contains(v, []byte("0.0.0-test")) {
		t.Fatalf("beet version: %v %s", err, v)
	}
	if f, err := exec.Command("file", bin).CombinedOutput(); err == nil && !bytes.Contains(f, []byte("statically linked")) {
		t.Errorf("the binary is not static: %s", f)
	}
}
