package config_test

import (
	"strings"
	"testing"

	"github.com/beethq/beet/internal/config"
)

func TestSignup(t *testing.T) {
	for _, tc := range []struct {
		env, flag string
		want      bool
		err       bool
	}{
		{"", "", false, false},
		{"open", "", true, false},
		{" OPEN ", "", true, false},
		{"open", "closed", false, false},
		{"yes", "", false, true},
	} {
		var args []string
		if tc.flag != "" {
			args = []string{"--signup", tc.flag}
		}
		c, err := config.Load(args, env(map[string]string{"BEET_SIGNUP": tc.env}))
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "BEET_SIGNUP (--signup)") {
				t.Errorf("BEET_SIGNUP=%q: error %v, want one naming BEET_SIGNUP", tc.env, err)
			}
			continue
		}
		if err != nil || c.SignupOpen != tc.want {
			t.Errorf("BEET_SIGNUP=%q --signup=%q: SignupOpen %v, %v; want %v", tc.env, tc.flag, c.SignupOpen, err, tc.want)
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	c, err := config.Load(nil, env(map[string]string{"BEET_TRUSTED_PROXIES": " 10.0.0.0/8, 192.0.2.7 ,::1"}))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := config.ParseProxies(c.TrustedProxies)
	if err != nil || len(ps) != 3 || ps[0].String() != "10.0.0.0/8" || ps[1].String() != "192.0.2.7/32" || ps[2].String() != "::1/128" {
		t.Fatalf("proxies %v, %v", ps, err)
	}
	if _, err := config.Load(nil, env(map[string]string{"BEET_TRUSTED_PROXIES": "10.0.0.0/8,proxy.local"})); err == nil ||
		!strings.Contains(err.Error(), "BEET_TRUSTED_PROXIES (--trusted-proxies)") || !strings.Contains(err.Error(), `"proxy.local"`) {
		t.Errorf("a host name: %v", err)
	}
}
