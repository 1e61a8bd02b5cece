/* serve_addr.h -- the argument of --serve: "PORT", "ADDR:PORT" (IPv4) or
 * "[ADDR]:PORT" (IPv6), numeric only (no name lookup: what is bound is
 * exactly what the user wrote).  Without ADDR, 127.0.0.1: the exporter is
 * reachable from other hosts only when asked for (docs/fleet.md). */
#ifndef MEMTOP_SERVE_ADDR_H
#define MEMTOP_SERVE_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct mt_serve_addr {
    struct sockaddr_storage sa;
    bool ipv6;
    char text[80]; /* as bound, for messages: "127.0.0.1:9477", "[::1]:9477" */
} mt_serve_addr;

/* 0, or -1 with a one-line message in err. */
int mt_serve_addr_parse(const char *arg, mt_serve_addr *out, char *err, size_t n);

#endif
