/* lp_status.c — the single error message slot behind lp_status.h. */
#include "lp_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char message[1024];

lp_status lp_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return LP_ERR;
}

lp_status lp_context(const char *fmt, ...) {
  char prefix[512], old[sizeof message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, message, sizeof old);
  size_t n = strlen(prefix);
  if (n + 2 >= sizeof message) n = sizeof message - 3;
  memcpy(message, prefix, n);
  memcpy(message + n, ": ", 2);
  memcpy(message + n + 2, old, sizeof message - n - 3);
  message[sizeof message - 1] = '\0';
  return LP_ERR;
}

const char *lp_error(void) { return message; }
