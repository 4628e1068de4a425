package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// Every count has a limit: an account's beets and its live API keys. The
// one past the limit is a conflict that says so, and creates nothing.
func TestAccountLimits(t *testing.T) {
	ctx := context.Background()
	svc, store := openService(t, service.Options{})
	a, _, err := svc.CreateAccount(ctx, "many@example.com", "password1", beet.PlanPro)
	if err != nil {
		t.Fatal(err)
	}
	for i := range beet.MaxBeetsPerAccount {
		b := &beet.Beet{AccountID: a.ID, Name: fmt.Sprintf("b%d", i), Token: beet.NewToken(), Timezone: "UTC", Status: beet.StatusNew,
			Detection: beet.Detection{Mode: beet.ModeAuto}}
		if err := store.CreateBeet(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "one more"}); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Fatalf("beet %d: %v, want conflict", beet.MaxBeetsPerAccount+1, err)
	}
	keys, _ := svc.APIKeys(ctx, a.ID) // the account's first key
	for i := len(keys); i < beet.MaxAPIKeysPerAccount; i++ {
		if _, _, err := svc.CreateAPIKey(ctx, a.ID, fmt.Sprintf("k%d", i)); err != nil {
			t.Fatalf("key %d: %v", i+1, err)
		}
	}
	if _, _, err := svc.CreateAPIKey(ctx, a.ID, "one more"); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Fatalf("key %d: %v, want conflict", beet.MaxAPIKeysPerAccount+1, err)
	}
	keys, _ = svc.APIKeys(ctx, a.ID)
	if err := svc.RevokeAccountAPIKey(ctx, a.ID, keys[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.CreateAPIKey(ctx, a.ID, "after a revoke"); err != nil {
		t.Fatalf("a key after revoking one: %v", err)
	}
}
