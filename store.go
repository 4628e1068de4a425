package beet

import "context"

// Store is every store interface in one, for wiring. Code that needs one
// aggregate should ask for that interface only.
type Store interface {
	AccountStore
	APIKeyStore
	BeetStore
	EventStore
	ProblemStore
	FlipStore
	RotatedTokenStore
	IncidentStore
	ChannelStore
	DeliveryStore
	MaintenanceStore
	SessionStore
	DashboardStore
	UserStore
	TagStore
	StatusPageStore
	ImportStore
	// Ping checks the database answers.
	Ping(ctx context.Context) error
	// SchemaCurrent reports whether every migration has been applied.
	SchemaCurrent(ctx context.Context) (bool, error)
	Close() error
}
