/* caps.c -- this process's effective capabilities, from capget(2) (no
 * libcap: one system call, see caps.h). */
#include "caps.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

bool mt_cap_effective(int cap)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0, 0, 0}};
    if (cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3 || syscall(SYS_capget, &hdr, data) != 0)
        return false;
    return (data[cap / 32].effective >> (cap % 32)) & 1u;
}
