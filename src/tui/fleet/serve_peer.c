/* serve_peer.c -- see serve_peer.h.  /proc/net/tcp lines read
 * "sl local rem st queues timer retransmits uid timeout inode ...", the
 * addresses as the kernel's 32-bit words in hex (host order of the
 * network-order bytes: comparable to s_addr as is), ports in hex. */
#include "serve_peer.h"

#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One name or uid of MEMTOP_SERVE_USERS. */
static int add_user(mt_peer_policy *p, const char *name, char *err, size_t n)
{
    if (p->nusers >= MT_PEER_MAX_USERS) {
        snprintf(err, n, "MEMTOP_SERVE_USERS: more than %d users", MT_PEER_MAX_USERS);
        return -1;
    }
    char *end;
    unsigned long v = strtoul(name, &end, 10);
    if (*name >= '0' && *name <= '9' && !*end && v < (uid_t)-1) {
        p->users[p->nusers++] = (uid_t)v;
        return 0;
    }
    struct passwd *pw = getpwnam(name);
    if (!pw) {
        snprintf(err, n, "MEMTOP_SERVE_USERS: no such user: '%s'", name);
        return -1;
    }
    p->users[p->nusers++] = pw->pw_uid;
    return 0;
}

int mt_peer_policy_init(mt_peer_policy *p, const char *users, unsigned short port, char *err,
                        size_t n)
{
    memset(p, 0, sizeof *p);
    p->port = port;
    p->users[p->nusers++] = 0;
    p->users[p->nusers++] = geteuid();
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", users ? users : "");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
        if (add_user(p, tok, err, n) != 0)
            return -1;
    return 0;
}

/* The client's address as /proc/net prints it: 1 word (v4) or 4 (v6). */
typedef struct peer {
    bool v6;
    uint32_t addr[4];
    unsigned port;
} peer;

static bool peer_of(const struct sockaddr *sa, socklen_t len, peer *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        out->addr[0] = in->sin_addr.s_addr;
        out->port = ntohs(in->sin_port);
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        out->v6 = true;
        memcpy(out->addr, &in6->sin6_addr, sizeof out->addr);
        out->port = ntohs(in6->sin6_port);
        return true;
    }
    return false;
}

/* The owner of the socket from c to port in file, or -1 if none is there. */
static long owner_in(const char *file, const peer *c, unsigned port)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    char line[512];
    long uid = -1;
    int words = c->v6 ? 4 : 1;
    while (uid < 0 && fgets(line, sizeof line, f)) {
        char local[40], rem[40];
        unsigned lport, rport, u;
        if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %*x %*x:%*x %*x:%*x %*x %u",
                   local, &lport, rem, &rport, &u) != 5 ||
            strlen(local) != (size_t)8 * words || lport != c->port || rport != port)
            continue;
        bool same = true;
        for (int i = 0; i < words && same; i++) {
            char w[9];
            memcpy(w, local + 8 * i, 8);
            w[8] = '\0';
            same = (uint32_t)strtoul(w, NULL, 16) == c->addr[i];
        }
        if (same)
            uid = u;
    }
    fclose(f);
    return uid;
}

bool mt_peer_allowed(const mt_peer_policy *p, const struct sockaddr *addr, socklen_t len)
{
    peer c;
    if (!peer_of(addr, len, &c))
        return false;
    long uid = owner_in(c.v6 ? "/proc/net/tcp6" : "/proc/net/tcp", &c, p->port);
    if (uid < 0 && c.v6 && !c.addr[0] && !c.addr[1] && c.addr[2] == htonl(0xffff)) {
        /* ::ffff:a.b.c.d on a dual-stack socket: an IPv4 client */
        peer v4 = {false, {c.addr[3], 0, 0, 0}, c.port};
        uid = owner_in("/proc/net/tcp", &v4, p->port);
    }
    if (uid < 0)
        return true; /* not a socket of this host: another host's client */
    for (size_t i = 0; i < p->nusers; i++)
        if ((long)p->users[i] == uid)
            return true;
    return false;
}
