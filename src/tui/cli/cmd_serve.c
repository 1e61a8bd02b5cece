/* cmd_serve.c -- `memtop --serve [ADDR:]PORT`: the exporter, until
 * SIGINT, SIGTERM or SIGHUP.  Signals are blocked before libmicrohttpd's
 * thread starts (it inherits the mask), so they all come here.
 * MEMTOP_SERVE_USERS names the local users besides root and our own who may
 * connect (serve_peer.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "memtop_ipc.h"
#include "serve_addr.h"
#include "serve_http.h"
#include "signals.h"

#define SERVE_TOP_DEFAULT 10

int mt_cmd_serve(const mt_opts *o)
{
    mt_serve_addr a;
    char err[512];
    if (mt_serve_addr_parse(o->serve_addr, &a, err, sizeof err) != 0) {
        mt_errorf("%s", err);
        return MT_EXIT_USAGE;
    }
    mt_peer_policy peers;
    if (mt_peer_policy_init(&peers, getenv("MEMTOP_SERVE_USERS"), err, sizeof err) != 0) {
        mt_errorf("%s", err);
        return MT_EXIT_USAGE;
    }
    sigset_t set, old;
    mt_sig_block(&set, &old, 0);
    signal(SIGPIPE, SIG_IGN);
    mt_server s;
    long top = o->top_given ? o->top : SERVE_TOP_DEFAULT;
    if (mt_server_start(&s, &a, &peers, mt_shm_dir(), !o->no_symbols, top,
                        (uint64_t)o->serve_min_age_s, err, sizeof err) != 0) {
        mt_errorf("%s", err);
        mt_sig_restore(&old);
        return MT_EXIT_FAIL;
    }
    mt_errorf("serving http://%s/ (/metrics, /pprof/heap?pid=N); Ctrl-C stops", a.text);
    siginfo_t info;
    while (mt_sig_wait(&set, 3600, &info) == 0)
        ;
    mt_server_stop(&s);
    mt_sig_restore(&old);
    return MT_EXIT_OK;
}
