/* fleet_container.h -- the "container" label of a process for the
 * exporter: empty for a process of our own PID namespace, else the name of
 * its cgroup (docker-<id>.scope, libpod-<id>.scope, a systemd-nspawn
 * machine...) when it is not the exporter's own, else its PID namespace
 * ("pid:[INODE]", as --list says). */
#ifndef MEMTOP_FLEET_CONTAINER_H
#define MEMTOP_FLEET_CONTAINER_H

#include <stddef.h>

void mt_container_label(int pid, char *buf, size_t n);

#endif
