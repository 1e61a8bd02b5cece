/* nodiag.c -- a kernel without sock_diag's TCP handler, for one process.
 * Preloaded into `memtop --serve` by sec_serve_nodiag.py: every answer read
 * from a NETLINK_SOCK_DIAG socket becomes "no such socket" (ENOENT), which
 * is what a kernel without tcp_diag (or a container that may not load it)
 * answers for every socket, the exporter's own included.  Says so once on
 * stderr, so that the test knows the shim took hold. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int is_sock_diag(int fd)
{
    int proto = -1;
    socklen_t len = sizeof proto;
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    return getsockname(fd, (struct sockaddr *)&sa, &salen) == 0 && sa.ss_family == AF_NETLINK &&
           getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 && proto == NETLINK_SOCK_DIAG;
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    static ssize_t (*real)(int, void *, size_t, int);
    static int said;
    if (!real)
        real = (ssize_t(*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    ssize_t got = real(fd, buf, n, flags);
    struct {
        struct nlmsghdr nh;
        struct nlmsgerr e;
    } enoent;
    if (got < 0 || !is_sock_diag(fd) || n < sizeof enoent)
        return got;
    const struct nlmsghdr *asked = buf;
    memset(&enoent, 0, sizeof enoent);
    enoent.nh.nlmsg_len = sizeof enoent;
    enoent.nh.nlmsg_type = NLMSG_ERROR;
    enoent.nh.nlmsg_seq = got >= (ssize_t)sizeof *asked ? asked->nlmsg_seq : 0;
    enoent.e.error = -ENOENT;
    memcpy(buf, &enoent, sizeof enoent);
    if (!said++) {
        static const char msg[] = "nodiag: sock_diag answers ENOENT\n";
        (void)!write(2, msg, sizeof msg - 1);
    }
    return sizeof enoent;
}
