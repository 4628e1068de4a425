package beet_test

import (
	"testing"

	"github.com/beethq/beet"
)

// A service URL shows its scheme and a host only when the host is a
// server's name; a user key or a stray label in the host place is hidden.
func TestMaskURLShowsOnlyHostNames(t *testing.T) {
	for in, want := range map[string]string{
		"matrix://room@.room/": "matrix://…/…",
		"matrix://beet:password123@localhost:8008/?disableTLS=yes":                           "matrix://localhost:8008/…",
		"gotify://gotify.example.com/AexampleToken1x?title=beet":                             "gotify://gotify.example.com/…",
		"pushover://shoutrrr:azGDORePK8gMaC0QOYAMyEEuzJnyUi@uQiRzpo4DXghDmr9QzzfQu27cmVRsG/": "pushover://…/…",
		"telegram://123456789:AAHtoken@telegram?chats=@mychannel":                            "telegram://telegram/…",
		"https://hooks.example.com/":                                                         "https://hooks.example.com/",
	} {
		if got := beet.MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}
