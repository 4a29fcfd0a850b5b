/* a_pick.h — pick() of inlined.c, in a file of its own (see there). */
void hit(long i);
void miss(long i);

static inline __attribute__((always_inline)) void pick(long i)
{
    if (i % 3 == 0) /* @pick */
        hit(i);
    else
        miss(i);
}
