package deploy_test

import (
	"context"
	"debug/elf"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dockerDaemon returns why no Docker daemon can be used here, or "".
func dockerDaemon() string {
	if _, err := exec.LookPath("docker"); err != nil {
		return "the docker command is not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("docker info: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// TestDockerImage builds deploy/Dockerfile, runs the image until Docker
// reports its health check healthy, and runs `beet version` in it. It
// needs a Docker daemon (and time: a full build); without one it skips,
// and TestImageBinaryWithoutDocker checks what can be checked without.
func TestDockerImage(t *testing.T) {
	if why := dockerDaemon(); why != "" {
		t.Skipf("no Docker daemon reachable (%s): the image is not built here; TestImageBinaryWithoutDocker builds its binary as the Dockerfile does and runs it as the image would", why)
	}
	if testing.Short() {
		t.Skip("-short: building the image takes minutes")
	}
	tag := fmt.Sprintf("beet-imagetest:%d", time.Now().UnixNano())
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	docker("build", "-f", "deploy/Dockerfile", "--build-arg", "VERSION=v0.0.0-imagetest", "-t", tag, "..")
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })
	if out := docker("run", "--rm", tag, "version"); !strings.Contains(out, "v0.0.0-imagetest") {
		t.Errorf("beet version in the image = %q, want the build's version", out)
	}
	id := docker("run", "-d", "-p", "127.0.0.1::8080", tag)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	if user := docker("inspect", "--format", "{{.Config.User}}", id); user == "" || strings.HasPrefix(user, "0") || user == "root" {
		t.Errorf("the container runs as %q, want a non-root user", user)
	}
	// Waits for Docker's own verdict (start period 20 s, every 15 s).
	var status string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		status = docker("inspect", "--format", "{{.State.Health.Status}}", id)
		if status == "healthy" || status == "unhealthy" {
			break
		}
	}
	if status != "healthy" {
		logs, _ := exec.Command("docker", "logs", id).CombinedOutput()
		t.Fatalf("health status %q, want healthy; logs:\n%s", status, logs)
	}
}

// TestImageBinaryWithoutDocker: the image's binary, built with the
// Dockerfile's own build line, is static (it runs on distroless with no
// libc), reports the version given at build, and with the image's
// environment serves from its state directory as the image's non-root
// user (when the test runs as root), until the image's health check
// command says ready.
func TestImageBinaryWithoutDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a binary")
	}
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(df), "\\\n", " ")
	var build string
	var env []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "CGO_ENABLED=0 go build"); i >= 0 {
			build = line[i:]
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ENV "); ok {
			env = append(env, strings.Fields(rest)...)
		}
	}
	if build == "" || !strings.Contains(build, "-o /out/beet") {
		t.Fatalf("no `CGO_ENABLED=0 go build … -o /out/beet` line in the Dockerfile")
	}
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // the image's user must reach the binary and the data
	}
	bin := filepath.Join(dir, "beet")
	build = strings.NewReplacer("${VERSION}", "v0.0.0-imagetest", "${COMMIT}", "0123abc", "${DATE}", "2026-11-25T00:00:00Z",
		"-o /out/beet", "-o "+bin).Replace(build)
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader: it would not start on distroless/static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v", libs)
	}
	f.Close()

	data := filepath.Join(dir, "var-lib-beet")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		cred = &syscall.Credential{Uid: 65532, Gid: 65532} // the Dockerfile's USER
		if err := os.Chown(data, 65532, 65532); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("not root: the binary runs as this user, not as the image's 65532")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var environ []string
	for _, kv := range env {
		kv = strings.Replace(kv, "/var/lib/beet", data, 1)
		if strings.HasPrefix(kv, "BEET_LISTEN=") {
			kv = "BEET_LISTEN=" + addr // the image's :8080, on a free port here
		}
		environ = append(environ, kv)
	}
	environ = append(environ, "PATH=/usr/bin:/bin", "BEET_METRICS_LISTEN=off")
	run := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = environ
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return c
	}
	out, err := run("version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v0.0.0-imagetest") || !strings.Contains(string(out), "0123abc") {
		t.Errorf("beet version = %q, %v; want the version and commit given at build", out, err)
	}
	serve := run("serve")
	logs := &strings.Builder{}
	serve.Stdout, serve.Stderr = logs, logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGTERM)
		serve.Wait()
	})
	ready := false
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline) && !ready; time.Sleep(250 * time.Millisecond) {
		ready = run("healthcheck").Run() == nil
	}
	if !ready {
		t.Fatalf("`beet healthcheck` never passed; serve's output:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(data, "beet.db")); err != nil {
		t.Errorf("no database in the state directory: %v", err)
	}
}
