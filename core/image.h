/* image.h — a module's file contents laid out at their link-time addresses,
 * as the loader maps them before anything runs: what the relocator decodes
 * (code) and reads (jump tables in .rodata).  Never read from the process,
 * whose entries carry breaks. */
#ifndef CORE_IMAGE_H
#define CORE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct core_image {
  uint64_t base;  /* link-time address of bytes[0] (lowest PT_LOAD, page-aligned) */
  size_t size;
  uint8_t *bytes; /* zero where no segment lies */
} core_image;

lp_status core_image_load(const char *path, core_image *out);
void core_image_free(core_image *image);

#endif
