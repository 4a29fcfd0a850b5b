/* A small C project built by `make -j2` natively and under lazyprobe (the
 * test compares the two built programs byte for byte and their output). */
long part_a(long x);
long part_b(long x);
long part_c(long x);
