// Package deploy holds no Go code for Beet itself: this directory keeps the
// packaging and deployment files (Dockerfile, systemd unit, Kubernetes
// manifests, reverse proxy and compose examples, release script), and its
// tests check each of them with the tools available (docs/OPERATIONS.md).
package deploy
