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
