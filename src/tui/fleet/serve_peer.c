/* serve_peer.c -- see serve_peer.h.  The client's socket is found by its
 * exact four-tuple through sock_diag (NETLINK_SOCK_DIAG, one request and
 * one answer: what `ss` uses), not by reading /proc/net/tcp, whose read
 * walks every socket of the host (tens of milliseconds on a busy one).
 * sock_diag answers "no such socket" (ENOENT) also when the kernel has no
 * TCP handler for it (tcp_diag not built, or a container that may not load
 * the module); our own end of the connection, which surely exists, tells
 * the two apart, and without the handler /proc/net/tcp is read instead. */
#include "serve_peer.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
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

int mt_peer_policy_init(mt_peer_policy *p, const char *users, char *err, size_t n)
{
    memset(p, 0, sizeof *p);
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

/* One end of a TCP connection, as sock_diag wants it (network order). */
typedef struct end {
    int family;
    uint32_t addr[4];
    uint16_t port;
} end;

static bool end_of(const struct sockaddr *sa, socklen_t len, end *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        out->family = AF_INET;
        out->addr[0] = in->sin_addr.s_addr;
        out->port = in->sin_port;
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        out->family = AF_INET6;
        memcpy(out->addr, &in6->sin6_addr, sizeof out->addr);
        out->port = in6->sin6_port;
        /* ::ffff:a.b.c.d on a dual-stack socket: the client's is IPv4 */
        if (!out->addr[0] && !out->addr[1] && out->addr[2] == htonl(0xffff)) {
            out->family = AF_INET;
            out->addr[0] = out->addr[3];
            out->addr[1] = out->addr[2] = out->addr[3] = 0;
        }
        return true;
    }
    return false;
}

/* Ask sock_diag for the socket whose local end is c and remote end s (the
 * client's own): its owner, -1 when this host has no such socket (a client
 * of another host or network namespace), -2 when the kernel would not say. */
static long owner_of(const end *c, const end *s)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -2;
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 r;
    } req = {{sizeof req, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0}, {0}};
    req.r.sdiag_family = (uint8_t)c->family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    req.r.id.idiag_sport = c->port;
    req.r.id.idiag_dport = s->port;
    memcpy(req.r.id.idiag_src, c->addr, sizeof c->addr);
    memcpy(req.r.id.idiag_dst, s->addr, sizeof s->addr);
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    long uid = -2;
    union {
        struct nlmsghdr nh;
        char buf[8192];
    } ans;
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n = -1;
    if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) == sizeof req)
        n = recv(fd, &ans, sizeof ans, 0);
    if (n >= (ssize_t)sizeof ans.nh && NLMSG_OK(&ans.nh, (size_t)n)) {
        if (ans.nh.nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(&ans.nh);
            uid = ans.nh.nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error == -ENOENT ? -1 : -2;
        } else if (ans.nh.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
                   ans.nh.nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
            const struct inet_diag_msg *m = NLMSG_DATA(&ans.nh);
            uid = m->idiag_inode ? (long)m->idiag_uid : -2; /* no inode: see owner_line */
        }
    }
    close(fd);
    return uid;
}

/* One line of /proc/net/tcp or tcp6: whether it is the socket with local
 * end l and remote end r, and then its owner in *uid.  Addresses are the
 * kernel's words as they lie in memory, printed in hex; ports in host
 * order.  A socket without an inode (a time-wait or orphaned one: its
 * owner is gone and the line says uid 0) has no owner to trust: -2. */
static bool owner_line(const char *line, const end *l, const end *r, long *uid)
{
    unsigned a[2][4], port[2];
    unsigned long u, inode;
    size_t words = l->family == AF_INET ? 1 : 4;
    int n;
    if (words == 1)
        n = sscanf(line, "%*u: %8X:%4X %8X:%4X %*x %*x:%*x %*x:%*x %*x %lu %*d %lu", &a[0][0],
                   &port[0], &a[1][0], &port[1], &u, &inode);
    else
        n = sscanf(line,
                   "%*u: %8X%8X%8X%8X:%4X %8X%8X%8X%8X:%4X %*x %*x:%*x %*x:%*x %*x %lu %*d %lu",
                   &a[0][0], &a[0][1], &a[0][2], &a[0][3], &port[0], &a[1][0], &a[1][1], &a[1][2],
                   &a[1][3], &port[1], &u, &inode);
    if (n != (int)(4 + 2 * words))
        return false;
    const end *e[2] = {l, r};
    for (int k = 0; k < 2; k++) {
        if (port[k] != ntohs(e[k]->port))
            return false;
        for (size_t w = 0; w < words; w++)
            if (a[k][w] != e[k]->addr[w])
                return false;
    }
    *uid = inode ? (long)u : -2;
    return true;
}

/* The owner of the socket with local end l and remote end r by one of
 * /proc/net/tcp and tcp6: -1 when it lists no such socket, -2 when it
 * cannot be read. */
static long owner_in(const char *path, const end *l, const end *r)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -2;
    char line[512];
    long uid = -1;
    while (fgets(line, sizeof line, f))
        if (owner_line(line, l, r, &uid))
            break;
    if (ferror(f))
        uid = -2;
    fclose(f);
    return uid;
}

/* e as an IPv4-mapped IPv6 end (::ffff:a.b.c.d). */
static end mapped(const end *e)
{
    end m = *e;
    m.family = AF_INET6;
    m.addr[0] = m.addr[1] = 0;
    m.addr[2] = htonl(0xffff);
    m.addr[3] = e->addr[0];
    return m;
}

/* The owner of the socket with local end l and remote end r by
 * /proc/net/tcp (tcp6): -1 when this network namespace has no such socket,
 * -2 when it cannot tell.  An IPv4 client may have connected from an IPv6
 * socket (to ::ffff:a.b.c.d), listed in tcp6 with mapped addresses. */
static long owner_from_proc(const end *l, const end *r)
{
    if (l->family == AF_INET6)
        return owner_in("/proc/self/net/tcp6", l, r);
    long uid = owner_in("/proc/self/net/tcp", l, r);
    if (uid != -1)
        return uid;
    end ml = mapped(l), mr = mapped(r);
    return owner_in("/proc/self/net/tcp6", &ml, &mr);
}

/* Whether a is an address of this host (this network namespace): in
 * 127.0.0.0/8, ::1, or on one of its interfaces.  A client from such an
 * address is a local process, whatever sock_diag or /proc found. */
static bool is_local_address(const end *a)
{
    if (a->family == AF_INET && (ntohl(a->addr[0]) >> 24) == 127)
        return true;
    if (a->family == AF_INET6 && !a->addr[0] && !a->addr[1] && !a->addr[2] &&
        a->addr[3] == htonl(1))
        return true;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return true; /* cannot tell: as local, refused */
    bool local = false;
    for (struct ifaddrs *i = all; i && !local; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        end e;
        if (sa && sa->sa_family == a->family &&
            end_of(sa,
                   sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                             : sizeof(struct sockaddr_in),
                   &e))
            local = memcmp(e.addr, a->addr, sizeof e.addr) == 0;
    }
    freeifaddrs(all);
    return local;
}

bool mt_peer_allowed(const mt_peer_policy *p, const struct sockaddr *client, socklen_t clen,
                     const struct sockaddr *server, socklen_t slen)
{
    end c, s;
    if (!end_of(client, clen, &c) || !end_of(server, slen, &s))
        return false;
    if (c.family != s.family) { /* a mapped client of a dual-stack socket */
        s.family = AF_INET;
        s.addr[0] = s.addr[3];
        s.addr[1] = s.addr[2] = s.addr[3] = 0;
    }
    long uid = owner_of(&c, &s);
    if (uid == -1) { /* no such socket, or no TCP handler: ask for our own end */
        long ours = owner_of(&s, &c);
        uid = ours == -1 ? owner_from_proc(&c, &s) : ours >= 0 ? -1 : -2;
    }
    if (uid == -1 && is_local_address(&c))
        uid = -2; /* a local client whose socket was not found (gone, or missed) */
    if (uid == -1)
        return true; /* not a socket of this host: another host's client */
    for (size_t i = 0; uid >= 0 && i < p->nusers; i++)
        if ((long)p->users[i] == uid)
            return true;
    return false; /* another user's, or the kernel would not say whose */
}
