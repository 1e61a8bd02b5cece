/* core_log.h -- diagnostics from inside the target, without calling malloc. */
#ifndef MT_LOG_H
#define MT_LOG_H

enum { MT_LOG_ERROR = 0, MT_LOG_WARN = 1, MT_LOG_INFO = 2, MT_LOG_DEBUG = 3 };

void mt_log_setup(int level, const char *file_pattern);
void mt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
