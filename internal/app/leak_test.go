package app_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/beethq/beet/internal/testleak"
)

// TestMain fails the package's tests when they leave a goroutine running
// (internal/testleak, go.uber.org/goleak). go-redis retries a failed dial
// after sleeping 1 s, even once its client is closed (TestRedisCheckedAtStart
// dials a port where nothing listens); that goroutine then ends by itself.
func TestMain(m *testing.M) {
	testleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
