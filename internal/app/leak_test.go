package app_test

import (
	"testing"

	"github.com/beethq/beet/internal/testleak"
)

// TestMain fails the package's tests when they leave a goroutine running
// (internal/testleak, go.uber.org/goleak).
func TestMain(m *testing.M) { testleak.VerifyTestMain(m) }
