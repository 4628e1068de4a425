package app

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/service"
)

// startNotify connects the service to the delivery side (channel URL
// checks, email on or off, test messages sent at once) and starts the
// outbox worker. Every instance whose role runs jobs runs one; claims keep
// them apart. An ingest-only instance still sends test messages at once.
func (a *App) startNotify() error {
	var smtp *notify.SMTPConfig
	if a.cfg.SMTPURL != "" {
		c, err := notify.ParseSMTPURL(a.cfg.SMTPURL)
		if err != nil {
			return fmt.Errorf("BEET_SMTP_URL: %w", err)
		}
		smtp = c
	}
	allow := a.cfg.AllowPrivateTargets
	w := &notify.Worker{
		Store:       a.backend.Store,
		Sender:      notify.NewSender(notify.SenderOptions{AllowPrivate: allow, BaseURL: a.cfg.BaseURL, SMTP: smtp}),
		Maintenance: a.backend.Service,
		BaseURL:     a.cfg.BaseURL,
		Now:         a.now,
		Log:         a.log.With("component", "notify"),
		Lease:       a.cfg.DeliveryLease,
	}
	sent := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "beet_notify_deliveries_total",
		Help: "Delivery attempts by channel kind and outcome (delivered, retry, failed, suppressed).",
	}, []string{"kind", "outcome"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "beet_notify_send_seconds",
		Help:    "How long sends took, by channel kind.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"kind"})
	a.reg.MustRegister(sent, latency)
	// Every kind × outcome exists from the start, at 0: increase() over a
	// series whose first sample is already 1 is 0, so the first failure of
	// a kind after each restart would never fire BeetDeliveriesFailing.
	for _, kind := range append(beet.ChannelKinds[:len(beet.ChannelKinds):len(beet.ChannelKinds)], "unknown") {
		for _, outcome := range []string{string(beet.DeliveryDelivered), "retry", string(beet.DeliveryFailed), string(beet.DeliverySuppressed)} {
			sent.WithLabelValues(string(kind), outcome)
		}
		latency.WithLabelValues(string(kind))
	}
	w.Observe = func(kind beet.ChannelKind, outcome string, d time.Duration) {
		sent.WithLabelValues(string(kind), outcome).Inc()
		if outcome != "suppressed" {
			latency.WithLabelValues(string(kind)).Observe(d.Seconds())
		}
	}
	a.backend.Service.SetNotify(service.NotifyOptions{
		CheckTarget:  func(ctx context.Context, u string) error { return notify.CheckTarget(ctx, u, allow) },
		EmailEnabled: smtp != nil,
		DeliverNow:   w.DeliverNow,
	})
	if allow {
		a.log.Warn("channels may post to private addresses (BEET_ALLOW_PRIVATE_TARGETS=true)")
	}
	if a.cfg.RunsJobs() && !a.noJobs {
		a.goJob("notify", w.Run)
	}
	return nil
}
