/* serve_peer.h -- who may read the exporter.  HTTP knows no local users,
 * yet a root exporter shows every user's processes: any local user could
 * read through it what `memtop -p` refuses them (docs/security.md).  So a
 * client on this host (the kernel's sock_diag finds its socket in this
 * network namespace; without sock_diag's TCP handler, /proc/net/tcp and
 * tcp6 do) is served only when that socket's owner is root, the exporter's
 * own user, or a user named in MEMTOP_SERVE_USERS (names or uids,
 * comma-separated: the local Prometheus's user, say).  A client from
 * another host has no local user: it is served (what reaches a
 * non-loopback address is the operator's choice, docs/fleet.md); a client
 * from an address of this host whose socket is not found is refused. */
#ifndef MEMTOP_SERVE_PEER_H
#define MEMTOP_SERVE_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#define MT_PEER_MAX_USERS 32

typedef struct mt_peer_policy {
    uid_t users[MT_PEER_MAX_USERS];
    size_t nusers;
} mt_peer_policy;

/* From MEMTOP_SERVE_USERS (may be NULL).  0, or -1 with a one-line
 * message in err (an unknown user, too many). */
int mt_peer_policy_init(mt_peer_policy *p, const char *users, char *err, size_t n);

/* Whether the client at client, connected to our server address, may be
 * served. */
bool mt_peer_allowed(const mt_peer_policy *p, const struct sockaddr *client, socklen_t clen,
                     const struct sockaddr *server, socklen_t slen);

#endif
