/* segctl.h -- control-channel helpers of the pitfall tests' segment tool. */
#ifndef MTP_SEGCTL_H
#define MTP_SEGCTL_H

/* Each returns a process exit code. */
int mtp_ctl_ping(const char *path, int timeout_ms);
int mtp_ctl_hold(const char *path);
int mtp_layout(void);

#endif
