/* serve_addr.c -- see serve_addr.h. */
#include "serve_addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_port(const char *s, unsigned short *port)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || v < 1 || v > 65535)
        return -1;
    *port = (unsigned short)v;
    return 0;
}

int mt_serve_addr_parse(const char *arg, mt_serve_addr *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    char host[64] = "127.0.0.1";
    const char *port = arg, *colon = strrchr(arg, ':');
    if (colon) {
        size_t len = (size_t)(colon - arg);
        bool bracket = len >= 2 && arg[0] == '[' && arg[len - 1] == ']';
        if (bracket)
            arg++, len -= 2;
        if (len == 0 || len >= sizeof host || (!bracket && memchr(arg, ':', len))) {
            snprintf(err, n, "--serve: not [ADDR:]PORT: '%s'", port);
            return -1;
        }
        memcpy(host, arg, len);
        host[len] = '\0';
        port = colon + 1;
    }
    unsigned short p;
    if (parse_port(port, &p) != 0) {
        snprintf(err, n, "--serve: not a port (1-65535): '%s'", port);
        return -1;
    }
    struct sockaddr_in *v4 = (struct sockaddr_in *)&out->sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&out->sa;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(p);
        snprintf(out->text, sizeof out->text, "%s:%u", host, p);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(p);
        out->ipv6 = true;
        snprintf(out->text, sizeof out->text, "[%s]:%u", host, p);
    } else {
        snprintf(err, n, "--serve: not a numeric IPv4 or [IPv6] address: '%s'", host);
        return -1;
    }
    return 0;
}
