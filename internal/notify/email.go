package notify

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTPConfig is the mail server of BEET_SMTP_URL:
//
//	smtp://user:pass@host:587?from=alerts@example.com   STARTTLS required (the default)
//	smtp://host:25?from=…&tls=opportunistic              STARTTLS when offered
//	smtp://host:25?from=…&tls=none                       plain text (a relay on localhost)
//	smtps://user:pass@host:465?from=…                    TLS from the first byte
type SMTPConfig struct {
	Host, Username, Password string
	Port                     int
	From                     string
	TLS                      string // "starttls", "opportunistic", "none" or "implicit"
}

// ParseSMTPURL parses BEET_SMTP_URL. Its errors never repeat the password.
func ParseSMTPURL(raw string) (*SMTPConfig, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, errors.New("must look like smtp://user:pass@host:587?from=alerts@example.com (or smtps://)")
	}
	c := &SMTPConfig{Host: u.Hostname(), TLS: "starttls", Port: 587}
	if u.Scheme == "smtps" {
		c.TLS, c.Port = "implicit", 465
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return nil, errors.New("port must be a number from 1 to 65535")
		}
		c.Port = n
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	q := u.Query()
	if t := q.Get("tls"); t != "" {
		if u.Scheme == "smtps" || (t != "starttls" && t != "opportunistic" && t != "none") {
			return nil, errors.New("tls must be starttls, opportunistic or none (smtps:// is always TLS)")
		}
		c.TLS = t
	}
	c.From = q.Get("from")
	if c.From == "" {
		return nil, errors.New("needs from=address, the sender of alert emails")
	}
	if _, err := mail.ParseAddress(c.From); err != nil {
		return nil, fmt.Errorf("from=%q is not an email address", c.From)
	}
	return c, nil
}

func (s *Sender) sendEmail(ctx context.Context, to string, m *Message) error {
	c := s.smtp
	if c == nil {
		// The installation's to fix, not the channel's: retried, so the
		// alerts go out once the operator sets it within the day.
		return &SendError{Msg: "email is not configured on this installation (BEET_SMTP_URL)", Installation: true}
	}
	msg := gomail.NewMsg()
	if err := msg.From(c.From); err != nil {
		return &SendError{Msg: "from address: " + err.Error(), Permanent: true}
	}
	if err := msg.To(to); err != nil {
		return &SendError{Msg: "to address: " + err.Error(), Permanent: true}
	}
	msg.Subject(m.Title)
	msg.SetDateWithValue(m.At)
	domain := "beet.invalid"
	if a, err := mail.ParseAddress(c.From); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok {
			domain = d
		}
	}
	// The Message-ID is the idempotency key: a retried email is the same
	// message, which mail systems can drop as a duplicate. The
	// installation's part keeps another Beet's delivery 42 a new message.
	msg.SetMessageIDWithValue(m.IdempotencyKey + "." + s.install + "@" + domain)
	msg.SetGenHeader("X-Beet-Idempotency-Key", m.IdempotencyKey)
	msg.SetGenHeader("X-Beet-Incident", m.IncidentKey)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text())
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML())

	opts := []gomail.Option{gomail.WithPort(c.Port), gomail.WithTimeout(15 * time.Second)}
	switch c.TLS {
	case "implicit":
		opts = append(opts, gomail.WithSSL())
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case "opportunistic":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if c.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(c.Username), gomail.WithPassword(c.Password))
	}
	client, err := gomail.NewClient(c.Host, opts...)
	if err != nil {
		return smtpError(err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		if msg.IsDelivered() {
			// The server took the message (250 after DATA) and the
			// RSET or QUIT after it failed: it has the email, and a
			// retry would put a second copy in the inbox.
			return nil
		}
		return smtpError(err)
	}
	return nil
}

// smtpError classifies a mail failure. Only the server's 5xx answer about
// the recipient (RCPT TO) or the message (DATA and its end) refuses the
// message for good; its 4xx answer there is retried. Everything else (the
// greeting, STARTTLS, AUTH, MAIL FROM, the network) is this installation's
// fault, not the account's: an expired password must not drop every alert
// and mark every email channel failing. It is retried, the account reads
// a generic reason, and the operator's log gets the server's answer.
func smtpError(err error) error {
	text := "smtp: " + err.Error()
	var se *gomail.SendError
	if errors.As(err, &se) && se.ErrorCode() > 0 {
		switch se.Reason {
		case gomail.ErrSMTPRcptTo, gomail.ErrSMTPData, gomail.ErrSMTPDataClose:
			return &SendError{Msg: text, Permanent: !se.IsTemp() && se.ErrorCode() >= 500}
		}
	}
	msg := "smtp: this installation's mail server could not take the message"
	if _, cause, ok := netCause(err, true); ok {
		msg += " (" + cause + ")"
	}
	return &SendError{Msg: msg + "; its operator's log has the details", Detail: text, Installation: true}
}
