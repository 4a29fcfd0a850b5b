/* lp_status.h — the one status type of lazyprobe.
 *
 * Every fallible function returns lp_status and fills an out-parameter.  A
 * failure records one human-readable message (lp_fail) that travels up to the
 * command line, which prints it once as "lazyprobe: MESSAGE".  Shared by every
 * folder; it knows nothing else. */
#ifndef LP_STATUS_H
#define LP_STATUS_H

typedef enum lp_status {
  LP_OK = 0,
  LP_ERR = -1,
} lp_status;

/* Records the message (printf-style) and returns LP_ERR. */
lp_status lp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prefixes the current message with "CONTEXT: " and returns LP_ERR. */
lp_status lp_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last recorded message ("" when none). */
const char *lp_error(void);

#define LP_CHECK(expr)                    \
  do {                                    \
    if ((expr) != LP_OK) return LP_ERR;   \
  } while (0)

#endif
