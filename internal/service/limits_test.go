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

// An account has at most MaxUsersPerAccount users, and "this email
// address already has a user", which tells whether an email is
// registered anywhere, is answered at most 10 times in 15 minutes per
// account: a member cannot sweep a list of emails through the form.
func TestAddUserLimits(t *testing.T) {
	ctx := context.Background()
	svc, _ := openService(t, service.Options{})
	a, _, err := svc.CreateAccount(ctx, "team@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.CreateAccount(ctx, "elsewhere@example.com", "password1", beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := svc.AddUser(ctx, a.ID, "elsewhere@example.com", "password1"); beet.ErrorCode(err) != beet.ECONFLICT {
			t.Fatalf("registered email, try %d: %v, want conflict", i+1, err)
		}
	}
	if _, err := svc.AddUser(ctx, a.ID, "elsewhere@example.com", "password1"); beet.ErrorCode(err) != beet.ERATELIMITED {
		t.Fatalf("11th registered email: %v, want rate_limited", err)
	}
	if _, err := svc.AddUser(ctx, a.ID, "fresh@example.com", "password1"); beet.ErrorCode(err) != beet.ERATELIMITED {
		t.Fatalf("a new email while throttled: %v, want rate_limited (or it tells which emails are taken)", err)
	}

	b, _, err := svc.CreateAccount(ctx, "big@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < beet.MaxUsersPerAccount; i++ {
		if _, err := svc.AddUser(ctx, b.ID, fmt.Sprintf("u%d@example.com", i), "password1"); err != nil {
			t.Fatalf("user %d: %v", i+1, err)
		}
	}
	if _, err := svc.AddUser(ctx, b.ID, "one-more@example.com", "password1"); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Fatalf("user %d: %v, want conflict", beet.MaxUsersPerAccount+1, err)
	}
}
