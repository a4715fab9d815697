// Package postgres is litequeue's engine for a PostgreSQL server (see
// store.Engine): it creates and upgrades litequeue's tables in the
// connections' schema, claims with FOR UPDATE SKIP LOCKED, orders the
// writers that count a kind's runs with advisory locks, wakes idle
// workers with LISTEN/NOTIFY, and finds out, after a server restart,
// whether a COMMIT that got no answer took effect. Package
// litequeue/postgres opens a Queue on it.
package postgres
