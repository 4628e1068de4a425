package config_test

import (
	"strings"
	"testing"

	"github.com/beethq/beet/internal/config"
)

func TestNotifySettings(t *testing.T) {
	c, err := config.Load([]string{"--allow-private-targets", "true"}, env(map[string]string{
		"BEET_SMTP_URL": "smtp://user:hunter2@mail.example.com:587?from=alerts@example.com",
	}))
	if err != nil || !c.AllowPrivateTargets || c.SMTPURL == "" {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	for _, bad := range []map[string]string{
		{"BEET_SMTP_URL": "http://user:hunter2@mail.example.com"},
		{"BEET_SMTP_URL": "smtp://user:hunter2@mail.example.com"}, // no from=
		{"BEET_ALLOW_PRIVATE_TARGETS": "sometimes"},
	} {
		_, err := config.Load(nil, env(bad))
		if err == nil {
			t.Errorf("%v accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error repeats the SMTP password: %v", err)
		}
	}
}
