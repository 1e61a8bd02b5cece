/* serve_http.c -- request routing and answers of the exporter (see
 * serve_http.h). */
#include "serve_http.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "export.h"
#include "format.h"
#include "metrics_text.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

#define MIN_AGE_NS ((uint64_t)MT_SERVE_MIN_AGE_MS * 1000000u)

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              const void *data, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
    return answer(c, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Whatever a FILE writer made, as a body; NULL when out of memory. */
typedef int (*writer_fn)(FILE *f, void *arg); /* 0, or -1 */
static char *write_body(writer_fn fn, void *arg, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    int bad = fn(f, arg) != 0 || ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

typedef struct metrics_arg {
    mt_server *s;
    bool om;
} metrics_arg;

static int write_metrics(FILE *f, void *arg)
{
    metrics_arg *m = arg;
    mt_metrics_write(f, &m->s->fleet, m->s->top, m->om);
    return 0;
}

static bool wants_openmetrics(struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return accept && strstr(accept, "application/openmetrics-text");
}

static enum MHD_Result metrics(mt_server *s, struct MHD_Connection *c)
{
    bool om = wants_openmetrics(c);
    mt_fleet_refresh(&s->fleet, MIN_AGE_NS);
    mt_body *b = &s->metrics[om];
    if (b->generation != s->fleet.generation || !b->data) {
        metrics_arg arg = {s, om};
        size_t len;
        char *data = write_body(write_metrics, &arg, &len);
        if (!data)
            return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        free(b->data);
        *b = (mt_body){data, len, s->fleet.generation};
    }
    return answer(c, MHD_HTTP_OK, om ? MT_METRICS_OM_TYPE : MT_METRICS_TEXT_TYPE, b->data, b->len);
}

/* The process a /pprof/heap request names: ?pid=N, or ?exe=NAME. */
static mt_fleet_proc *pick(const mt_fleet *f, struct MHD_Connection *c)
{
    const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
    const char *exe = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "exe");
    if (pid) {
        char *end;
        long v = strtol(pid, &end, 10);
        return *pid && !*end && v > 0 && v < 1L << 30 ? mt_fleet_find(f, (int)v) : NULL;
    }
    for (size_t i = 0; exe && i < f->count; i++) {
        const char *path = f->procs[i]->v.seg.id.exe;
        if (strcmp(path, exe) == 0 || strcmp(mt_path_base(path), exe) == 0)
            return f->procs[i];
    }
    return NULL;
}

static int write_pprof(FILE *f, void *arg)
{
    mt_fleet_proc *p = arg;
    mt_export_src src = {&p->v, mt_view_state(&p->v), &p->loc, MT_SORT_LIVE, NULL, 0, false, 0};
    return mt_export_pprof(f, &src);
}

/* The profile of the process asked for, made once per snapshot. */
static enum MHD_Result pprof(mt_server *s, struct MHD_Connection *c)
{
    mt_fleet_refresh(&s->fleet, MIN_AGE_NS);
    mt_fleet_proc *p = pick(&s->fleet, c);
    if (!p)
        return text(c, MHD_HTTP_NOT_FOUND,
                    "no such process: give ?pid=N or ?exe=NAME of a process / lists\n");
    uint64_t seq = p->v.snap.slot.publish_seq;
    if (!p->pprof || p->pprof_seq != seq) {
        size_t len;
        uint8_t *data = (uint8_t *)write_body(write_pprof, p, &len);
        if (!data)
            return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        free(p->pprof);
        p->pprof = data;
        p->pprof_len = len;
        p->pprof_seq = seq;
    }
    return answer(c, MHD_HTTP_OK, "application/octet-stream", p->pprof, p->pprof_len);
}

static int write_index(FILE *f, void *arg)
{
    const mt_fleet *fl = arg;
    fprintf(f,
            "memtop %s exporter\n\n"
            "/metrics              Prometheus metrics of every process below (OpenMetrics when\n"
            "                      the Accept header asks for application/openmetrics-text)\n"
            "/pprof/heap?pid=N     pprof heap profile of process N (gzip'd profile.proto)\n"
            "/pprof/heap?exe=NAME  the same, of the lowest pid whose executable is NAME\n\n"
            "%zu processes (%zu more starting, %zu younger than --serve-min-age, %zu not "
            "readable by this user, %zu not running, %zu in error):\n",
            MEMTOP_VERSION, fl->count, fl->starting, fl->too_young, fl->denied, fl->not_running,
            fl->errors);
    for (size_t i = 0; i < fl->count; i++) {
        const mt_fleet_proc *p = fl->procs[i];
        fprintf(f, "  /pprof/heap?pid=%-8d %s%s%s%s\n", p->pid, p->v.seg.id.exe,
                p->container[0] ? " (container " : "", p->container, p->container[0] ? ")" : "");
    }
    return 0;
}

static enum MHD_Result index_page(mt_server *s, struct MHD_Connection *c)
{
    mt_fleet_refresh(&s->fleet, MIN_AGE_NS);
    size_t len;
    char *data = write_body(write_index, &s->fleet, &len);
    if (!data)
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    enum MHD_Result rc = answer(c, MHD_HTTP_OK, "text/plain; charset=utf-8", data, len);
    free(data);
    return rc;
}

static socklen_t addr_len(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* The client's user may read us (serve_peer.h): the client's and our end
 * of the connection make the four-tuple that finds its socket. */
static bool peer_ok(const mt_server *s, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sockaddr_storage local;
    socklen_t llen = sizeof local;
    if (!ci || !ci->client_addr || !fi ||
        getsockname(fi->connect_fd, (struct sockaddr *)&local, &llen) != 0)
        return false;
    return mt_peer_allowed(&s->peers, ci->client_addr, addr_len(ci->client_addr),
                           (const struct sockaddr *)&local, llen);
}

/* A connection begins: its client is checked once, here.  One from a
 * local user who may not read us is shut down at once (libmicrohttpd closes
 * it at its next poll), so that such a user cannot hold the connection
 * slots with requests that never end and keep every scraper out.  An
 * allowed one gets the server as its socket context, which route asks for:
 * a socket's owner never changes, and asking the kernel again per request
 * would cost a round trip (or a read of /proc/net/tcp, serve_peer.c). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    if (code != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (fi && peer_ok(cls, c))
        *socket_ctx = cls;
    else if (fi)
        shutdown(fi->connect_fd, SHUT_RDWR);
}

/* Whether on_connection let this connection's client in. */
static bool peer_allowed(const mt_server *s, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *si =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return si && si->socket_context == s;
}

static enum MHD_Result route(void *cls, struct MHD_Connection *c, const char *url,
                             const char *method, const char *version, const char *upload,
                             size_t *upload_size, void **req)
{
    (void)version, (void)upload, (void)req;
    mt_server *s = cls;
    if (*upload_size || !peer_allowed(s, c))
        return MHD_NO; /* a body, or a user who may not read: drop the connection */
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    if (strcmp(url, "/metrics") == 0)
        return metrics(s, c);
    if (strcmp(url, "/pprof/heap") == 0)
        return pprof(s, c);
    if (strcmp(url, "/") == 0)
        return index_page(s, c);
    return text(c, MHD_HTTP_NOT_FOUND, "not found: / lists what is here\n");
}

int mt_server_start(mt_server *s, const mt_serve_addr *a, const mt_peer_policy *peers,
                    const char *shm_dir, bool symbols, long top, uint64_t min_age_s, char *err,
                    size_t n)
{
    memset(s, 0, sizeof *s);
    s->peers = *peers;
    if (mt_fleet_init(&s->fleet, shm_dir, symbols, getenv("MEMTOP_SKIP_FUNCS")) != 0) {
        snprintf(err, n, "--serve: out of memory");
        return -1;
    }
    s->top = top;
    s->fleet.min_age_s = min_age_s;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (a->ipv6 ? MHD_USE_IPv6 : 0);
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, route, s, MHD_OPTION_SOCK_ADDR,
                                 (const struct sockaddr *)&a->sa, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)MT_SERVE_MAX_CONNS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                 (unsigned)MT_SERVE_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)MT_SERVE_TIMEOUT_S, MHD_OPTION_NOTIFY_CONNECTION,
                                 on_connection, s, MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, n, "--serve: cannot listen on %s: %s", a->text,
                 errno ? strerror(errno) : "libmicrohttpd failed");
        mt_fleet_free(&s->fleet);
        return -1;
    }
    return 0;
}

void mt_server_stop(mt_server *s)
{
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    for (int i = 0; i < 2; i++)
        free(s->metrics[i].data);
    mt_fleet_free(&s->fleet);
    memset(s, 0, sizeof *s);
}
