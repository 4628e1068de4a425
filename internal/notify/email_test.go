package notify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testlog"
)

// smtpServer is a real SMTP server on loopback (emersion/go-smtp) that
// keeps what it is sent; it refuses a recipient on demand.
type smtpServer struct {
	addr     string
	mu       sync.Mutex
	mails    []gotMail
	refuseTo string
	failNext int // answer the next n DATA commands with a temporary 451
	// authErr, when set, is the answer to every AUTH (a password the
	// server no longer takes); refuseFrom, the answer to every MAIL FROM.
	authErr, refuseFrom *smtp.SMTPError
	// dropAtReset hangs up when the client, its message taken, sends
	// RSET or QUIT: the answer to a sent message that never arrives.
	dropAtReset bool
}

type gotMail struct {
	From string
	To   []string
	Data []byte
}

type smtpSession struct {
	s   *smtpServer
	cur gotMail
}

func (s *smtpServer) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s}, nil }
func (x *smtpSession) Reset()                                     { x.cur = gotMail{} }
func (x *smtpSession) Logout() error                              { return nil }
func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if x.s.refuseFrom != nil {
		return x.s.refuseFrom
	}
	x.cur.From = from
	return nil
}

// AUTH is CRAM-MD5, the one mechanism go-mail offers over plain text
// that go-sasl has no server for: a challenge, then any answer is taken
// or refused with authErr.
func (x *smtpSession) AuthMechanisms() []string         { return []string{"CRAM-MD5"} }
func (x *smtpSession) Auth(string) (sasl.Server, error) { return &cramServer{err: x.s.authErr}, nil }

type cramServer struct {
	err        *smtp.SMTPError
	challenged bool
}

func (c *cramServer) Next([]byte) ([]byte, bool, error) {
	if !c.challenged {
		c.challenged = true
		return []byte("<1.1@localhost>"), false, nil
	}
	if c.err != nil {
		return nil, false, c.err
	}
	return nil, true, nil
}
func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == x.s.refuseTo {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	x.cur.To = append(x.cur.To, to)
	return nil
}
func (x *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if x.s.failNext > 0 {
		x.s.failNext--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	x.cur.Data = b
	x.s.mails = append(x.s.mails, x.cur)
	return nil
}

func newSMTPServer(t *testing.T) *smtpServer {
	s := &smtpServer{}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	go srv.Serve(&droppingListener{Listener: l, s: s})
	t.Cleanup(func() { srv.Close() })
	return s
}

// droppingListener's connections hang up on RSET or QUIT when the server
// is told to (go-smtp itself always answers them).
type droppingListener struct {
	net.Listener
	s *smtpServer
}

func (l *droppingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &droppingConn{Conn: c, s: l.s}, nil
}

type droppingConn struct {
	net.Conn
	s *smtpServer
}

func (c *droppingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.s.mu.Lock()
	drop := c.s.dropAtReset
	c.s.mu.Unlock()
	if line := string(p[:n]); drop && (strings.HasPrefix(line, "RSET") || strings.HasPrefix(line, "QUIT")) {
		c.Conn.Close()
		return 0, io.EOF
	}
	return n, err
}

func (s *smtpServer) got() []gotMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gotMail(nil), s.mails...)
}

// parts reads a multipart/alternative message into its decoded parts.
func parts(t *testing.T, m *mail.Message) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q, want multipart/alternative", m.Header.Get("Content-Type"))
	}
	out := map[string]string{}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			r = quotedprintable.NewReader(p)
		}
		b, _ := io.ReadAll(r)
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out[ct] = string(b)
	}
	return out
}

func TestEmailOverSMTP(t *testing.T) {
	srv := newSMTPServer(t)
	srv.failNext = 1 // a temporary refusal is retried
	cfg, err := notify.ParseSMTPURL(fmt.Sprintf("smtp://%s?from=alerts@beet.example.com&tls=none", srv.addr))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, "sqlite")
	ch := r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
	r.down()
	w := r.worker(func(w *notify.Worker) {
		w.Sender = notify.NewSender(notify.SenderOptions{SMTP: cfg, BaseURL: w.BaseURL})
	})
	ds := r.drain(w, ch)
	if d := ds[0]; d.Status != beet.DeliveryDelivered || d.Attempts != 2 {
		t.Fatalf("delivery %+v; want delivered on attempt 2 after a 451", d)
	}
	mails := srv.got()
	if len(mails) != 1 {
		t.Fatalf("the server got %d mails, want 1", len(mails))
	}
	got := mails[0]
	if got.From != "alerts@beet.example.com" || len(got.To) != 1 || got.To[0] != "ops@example.com" {
		t.Fatalf("envelope %s → %v", got.From, got.To)
	}
	m, err := mail.ReadMessage(bytes.NewReader(got.Data))
	if err != nil {
		t.Fatal(err)
	}
	dec := new(mime.WordDecoder)
	subject, _ := dec.DecodeHeader(m.Header.Get("Subject"))
	if subject != "Checkout succeeded is down" {
		t.Errorf("Subject %q", subject)
	}
	key := ds[0].IdempotencyKey()
	if id := m.Header.Get("Message-Id"); !strings.HasPrefix(id, "<"+key+".") || !strings.HasSuffix(id, "@beet.example.com>") ||
		m.Header.Get("X-Beet-Idempotency-Key") != key {
		t.Errorf("Message-ID %q, X-Beet-Idempotency-Key %q; want the idempotency key", id, m.Header.Get("X-Beet-Idempotency-Key"))
	}
	p := parts(t, m)
	text, html := p["text/plain"], p["text/html"]
	link := fmt.Sprintf("https://beet.example.com/beets/%d", r.beet.ID)
	for _, want := range []string{"Checkout succeeded is down", "No event for 2 min; expected one at least every 1 min", "Europe/Riga", link} {
		if !strings.Contains(text, want) || !strings.Contains(html, want) {
			t.Errorf("the text or HTML part lacks %q:\n%s\n%s", want, text, html)
		}
	}
	if !strings.Contains(html, `<a href="`+link+`">`) {
		t.Errorf("HTML part has no link: %s", html)
	}
}

func TestEmailRefusedRecipient(t *testing.T) {
	srv := newSMTPServer(t)
	srv.refuseTo = "gone@example.com"
	cfg, _ := notify.ParseSMTPURL(fmt.Sprintf("smtp://%s?from=alerts@beet.example.com&tls=none", srv.addr))
	r := newRig(t, "sqlite")
	ch := r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "gone@example.com"})
	r.down()
	ds := r.drain(r.worker(func(w *notify.Worker) { w.Sender = notify.NewSender(notify.SenderOptions{SMTP: cfg}) }), ch)
	if d := ds[0]; d.Status != beet.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.Error, "550") {
		t.Fatalf("delivery %+v; want failed at once on a 550", d)
	}
}

func TestParseSMTPURL(t *testing.T) {
	c, err := notify.ParseSMTPURL("smtps://user:p%40ss@mail.example.com?from=a@example.com")
	if err != nil || c.Port != 465 || c.TLS != "implicit" || c.Password != "p@ss" || c.Username != "user" {
		t.Fatalf("%+v %v", c, err)
	}
	if c, _ := notify.ParseSMTPURL("smtp://mail.example.com?from=a@example.com"); c.Port != 587 || c.TLS != "starttls" {
		t.Fatalf("defaults %+v", c)
	}
	for _, bad := range []string{"http://x", "smtp://mail.example.com", "smtp://mail.example.com?from=nope", "smtp://h?from=a@b.c&tls=maybe", "smtp://u:hunter2@h:99999?from=a@b.c"} {
		_, err := notify.ParseSMTPURL(bad)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestDeliveryErrorsHideTheInstallation: a failed delivery tells the
// account what went wrong, but not where this installation's resolver or
// mail server is; the operator's log keeps the whole error.
func TestDeliveryErrorsHideTheInstallation(t *testing.T) {
	giveUp := func(w *notify.Worker) { w.GiveUpAfter = 30 * time.Millisecond }
	resolverAddr := regexp.MustCompile(` on [^ ]+:53`)

	r := newRig(t, "sqlite")
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: "http://nonexistent.invalid/hook"})
	r.down()
	ds := r.drain(r.worker(giveUp), ch)
	if d := ds[0]; d.Status != beet.DeliveryFailed || !strings.Contains(d.Error, "lookup nonexistent.invalid") || resolverAddr.MatchString(d.Error) {
		t.Errorf("webhook to a name that does not resolve: %q; want the lookup's failure without the resolver's address", d.Error)
	}

	// A mail server that refuses connections, on a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg, _ := notify.ParseSMTPURL("smtp://" + addr + "?from=alerts@beet.example.com&tls=none")
	var log testlog.Buffer
	r = newRig(t, "sqlite")
	ch = r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
	r.down()
	ds = r.drain(r.worker(giveUp, func(w *notify.Worker) {
		w.Sender = notify.NewSender(notify.SenderOptions{SMTP: cfg})
		w.Log = testlog.New(&log)
	}), ch)
	if d := ds[0]; d.Status != beet.DeliveryFailed || strings.Contains(d.Error, addr) || strings.Contains(d.Error, "127.0.0.1") ||
		!strings.Contains(d.Error, "mail server could not take the message") || !strings.Contains(d.Error, "connection refused") {
		t.Errorf("email through a mail server that refuses connections: %q; want the refusal without the server's address", d.Error)
	}
	if !strings.Contains(log.String(), addr) {
		t.Errorf("the operator's log lacks the mail server's address:\n%s", log.String())
	}
}

// TestMailServerFaultsAreTheInstallations: when this installation's mail
// server refuses its login (an expired password, 535) or its sender (MAIL
// FROM), no customer's address is at fault. The alert is retried, the
// channel is never marked failing, the account reads a generic reason,
// and the operator's log gets the server's answer at error level.
func TestMailServerFaultsAreTheInstallations(t *testing.T) {
	auth := &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Username and Password not accepted"}
	from := &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "sender not allowed to relay"}
	for name, answer := range map[string]*smtp.SMTPError{"AUTH": auth, "MAIL FROM": from} {
		t.Run(name, func(t *testing.T) {
			srv := newSMTPServer(t)
			if answer == auth {
				srv.authErr = auth
			} else {
				srv.refuseFrom = from
			}
			cfg, err := notify.ParseSMTPURL(fmt.Sprintf("smtp://beet:expired@%s?from=alerts@beet.example.com&tls=none", srv.addr))
			if err != nil {
				t.Fatal(err)
			}
			var log testlog.Buffer
			r := newRig(t, "sqlite")
			ch := r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
			r.down()
			ds := r.drain(r.worker(func(w *notify.Worker) {
				w.Sender = notify.NewSender(notify.SenderOptions{SMTP: cfg})
				w.Log = testlog.New(&log)
				w.GiveUpAfter = 150 * time.Millisecond
			}), ch)
			d := ds[0]
			if d.Attempts < 2 || !strings.Contains(d.Error, "mail server could not take the message") || strings.Contains(d.Error, "5.7.") {
				t.Errorf("delivery after %d attempts: %q; want retries and the generic reason", d.Attempts, d.Error)
			}
			c, err := r.db.FindChannelByID(t.Context(), ch.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c.FailingSince != nil || c.FailingReason != "" {
				t.Errorf("the customer's channel is marked failing: %q", c.FailingReason)
			}
			code := strconv.Itoa(answer.Code)
			if l := log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, code) {
				t.Errorf("the operator's log lacks the server's %s at error level:\n%s", code, l)
			}
		})
	}
}

// TestMessageIDsDifferAcrossInstallations: two installations sending from
// one domain (staging and production) give their delivery 1 different
// Message-IDs, or a mailbox that holds one drops the other; one
// installation gives a retry the same one.
func TestMessageIDsDifferAcrossInstallations(t *testing.T) {
	srv := newSMTPServer(t)
	cfg, _ := notify.ParseSMTPURL(fmt.Sprintf("smtp://%s?from=alerts@example.com&tls=none", srv.addr))
	ids := map[string]string{}
	for _, base := range []string{"https://beet.example.com", "https://staging.beet.example.com", "https://beet.example.com"} {
		r := newRig(t, "sqlite")
		ch := r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
		r.down()
		r.drain(r.worker(func(w *notify.Worker) {
			w.BaseURL = base
			w.Sender = notify.NewSender(notify.SenderOptions{SMTP: cfg, BaseURL: base})
		}), ch)
		mails := srv.got()
		m, err := mail.ReadMessage(bytes.NewReader(mails[len(mails)-1].Data))
		if err != nil {
			t.Fatal(err)
		}
		id := m.Header.Get("Message-Id")
		if prev, ok := ids[base]; ok && prev != id {
			t.Errorf("%s gave delivery 1 the Message-IDs %s and %s; want one", base, prev, id)
		}
		ids[base] = id
	}
	if ids["https://beet.example.com"] == ids["https://staging.beet.example.com"] {
		t.Errorf("production and staging both sent %s", ids["https://beet.example.com"])
	}
}

// TestEmailTakenThenHungUp: a server that took the message and then hung
// up (at RSET or QUIT) has the email; sending it again would put a
// second copy in the inbox.
func TestEmailTakenThenHungUp(t *testing.T) {
	srv := newSMTPServer(t)
	srv.dropAtReset = true
	cfg, _ := notify.ParseSMTPURL(fmt.Sprintf("smtp://%s?from=alerts@beet.example.com&tls=none", srv.addr))
	r := newRig(t, "sqlite")
	ch := r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
	r.down()
	ds := r.drain(r.worker(func(w *notify.Worker) {
		w.Sender = notify.NewSender(notify.SenderOptions{SMTP: cfg})
		w.GiveUpAfter = 150 * time.Millisecond
	}), ch)
	if d := ds[0]; d.Status != beet.DeliveryDelivered || d.Attempts != 1 {
		t.Errorf("delivery %+v; want delivered at the first attempt", d)
	}
	if n := len(srv.got()); n != 1 {
		t.Errorf("the mailbox got %d copies of the alert; want 1", n)
	}
}

// TestEmailNotConfigured: an email channel on an installation without a
// mail server is retried, not marked failing: the fault is the
// installation's, and the alerts go out once it is set.
func TestEmailNotConfigured(t *testing.T) {
	r := newRig(t, "sqlite")
	ch := r.channel(beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
	r.down()
	w := r.worker(func(w *notify.Worker) { w.Sender = notify.NewSender(notify.SenderOptions{}) })
	if _, err := w.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds, err := r.db.FindDeliveries(context.Background(), ch.ID, 0)
	if err != nil || len(ds) != 1 || ds[0].Status != beet.DeliveryPending || !strings.Contains(ds[0].Error, "BEET_SMTP_URL") {
		t.Fatalf("deliveries %+v, %v; want one pending, to retry, naming BEET_SMTP_URL", ds, err)
	}
	if got, err := r.db.FindChannelByID(context.Background(), ch.ID); err != nil || got.FailingSince != nil {
		t.Errorf("channel %+v, %v; want it not failing", got, err)
	}
}
