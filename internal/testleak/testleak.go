// Package testleak fails a package's tests when they leave a goroutine
// running (go.uber.org/goleak): a worker, sweeper, writer or server that a
// Stop or Close forgot keeps running in production too, once per restart
// of the component.
//
// Use it from each package's TestMain:
//
//	func TestMain(m *testing.M) { testleak.VerifyTestMain(m) }
package testleak

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// VerifyTestMain runs the tests, then, if they passed, checks that no
// goroutine outlived them (goleak retries for a while, so goroutines that
// are on their way out are not reported). Idle keep-alive connections of
// http.DefaultClient, which tests use to call their servers, are closed
// first: they belong to the test, not to the code under test.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	if code == 0 {
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left running after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
