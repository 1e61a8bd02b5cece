/* serve_http.h -- the exporter's HTTP side (libmicrohttpd): one polling
 * thread answers every request, so requests never run concurrently and
 * the fleet table needs no lock; what a request costs is bounded:
 *
 *   - the fleet is refreshed at most every MT_SERVE_MIN_AGE_MS whatever
 *     the request rate, and each /metrics body (text or OpenMetrics) is
 *     made once per refresh and copied to every scraper of it;
 *   - a /pprof/heap profile is made once per snapshot of its process;
 *   - at most MT_SERVE_MAX_CONNS connections at once (MT_SERVE_PER_IP from
 *     one address), each idle for at most MT_SERVE_TIMEOUT_S; more are
 *     refused by libmicrohttpd, not queued.
 *
 *
 * Requests from this host are answered only for the users serve_peer.h
 * allows (checked once, with the connection's own addresses, when the
 * connection is accepted: anyone else's is shut down then, before it can
 * take a connection slot for long).  Routes: /metrics,
 * /pprof/heap?pid=N (or ?exe=NAME: the lowest pid whose executable's path or base name is NAME), /
 * (what is there). Only GET and HEAD. */
#ifndef MEMTOP_SERVE_HTTP_H
#define MEMTOP_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet_procs.h"
#include "serve_addr.h"
#include "serve_peer.h"

#define MT_SERVE_MIN_AGE_MS 500
#define MT_SERVE_MAX_CONNS 64
#define MT_SERVE_PER_IP 16
#define MT_SERVE_TIMEOUT_S 10

typedef struct mt_body {
    char *data;
    size_t len;
    uint64_t generation; /* the fleet refresh it was made after; 0: none */
} mt_body;

typedef struct mt_server {
    struct MHD_Daemon *daemon;
    mt_fleet fleet;
    long top;           /* traces per process in /metrics */
    mt_body metrics[2]; /* [0] text 0.0.4, [1] OpenMetrics */
    mt_peer_policy peers;
} mt_server;

/* Serve on a the clients peers allows (serve_peer.h): the processes that
 * have run at least min_age_s seconds (mt_fleet.min_age_s).  0, or -1
 * with a one-line message in err. */
int mt_server_start(mt_server *s, const mt_serve_addr *a, const mt_peer_policy *peers,
                    const char *shm_dir, bool symbols, long top, uint64_t min_age_s, char *err,
                    size_t n);
void mt_server_stop(mt_server *s);

#endif
