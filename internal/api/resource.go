package api

import (
	"context"
	"net/http"

	"github.com/beethq/beet/internal/httpx"
)

// The create/read/update/delete handlers of the account's resources share one
// shape: read the path ID, decode the body, call the service, answer the JSON.
// These helpers hold that shape once; a handler supplies only its service call.

// idOf returns a reader of {id} as the ID of a what (e.g. "channel").
func idOf(what string) func(*http.Request) (int64, error) {
	return func(r *http.Request) (int64, error) { return channelID(r, what) }
}

// deref is *p, or the zero value for an absent field.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// createResource decodes a Req, creates the resource from it and answers 201
// with its JSON and Location.
func createResource[Req, T, J any](w http.ResponseWriter, r *http.Request, create func(Req) (T, error),
	location func(T) string, toJSON func(T) J) error {
	var req Req
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := create(req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", location(v))
	httpx.WriteJSON(w, http.StatusCreated, toJSON(v))
	return nil
}

// serveFunc is an authenticated API call (see route).
type serveFunc = func(w http.ResponseWriter, r *http.Request, accountID int64) error

// writeList answers the items under key, or passes err on.
func writeList[T, J any](w http.ResponseWriter, key string, items []T, err error, toJSON func(T) J) error {
	if err != nil {
		return err
	}
	out := make([]J, 0, len(items))
	for _, v := range items {
		out = append(out, toJSON(v))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string][]J{key: out})
	return nil
}

// accountList is the call that lists all of the account's resources of a
// kind under key.
func accountList[T, J any](key string, find func(ctx context.Context, accountID int64) ([]T, error), toJSON func(T) J) serveFunc {
	return func(w http.ResponseWriter, r *http.Request, accountID int64) error {
		items, err := find(r.Context(), accountID)
		return writeList(w, key, items, err, toJSON)
	}
}

// accountGet is the call that answers the resource {id}, a what.
func accountGet[T, J any](what string, load func(ctx context.Context, accountID, id int64) (T, error), toJSON func(T) J) serveFunc {
	return func(w http.ResponseWriter, r *http.Request, accountID int64) error {
		id, err := channelID(r, what)
		if err != nil {
			return err
		}
		v, err := load(r.Context(), accountID, id)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, toJSON(v))
		return nil
	}
}

// accountDelete is the call that deletes the resource {id}, a what.
func accountDelete(what string, del func(ctx context.Context, accountID, id int64) error) serveFunc {
	return func(w http.ResponseWriter, r *http.Request, accountID int64) error {
		return deleteResource(w, r, idOf(what), func(id int64) error { return del(r.Context(), accountID, id) })
	}
}

// updateResource reads the ID, decodes a Req, applies it and answers the
// changed resource's JSON.
func updateResource[Req, T, J any](w http.ResponseWriter, r *http.Request, readID func(*http.Request) (int64, error),
	apply func(id int64, req Req) (T, error), toJSON func(T) J) error {
	id, err := readID(r)
	if err != nil {
		return err
	}
	var req Req
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := apply(id, req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toJSON(v))
	return nil
}

// deleteResource reads the ID, deletes the resource and answers 204.
func deleteResource(w http.ResponseWriter, r *http.Request, readID func(*http.Request) (int64, error),
	del func(id int64) error) error {
	id, err := readID(r)
	if err != nil {
		return err
	}
	if err := del(id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
