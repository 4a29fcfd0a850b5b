/* Switches gcc dispatches through a table in ways a matcher must follow past
 * the dispatch's own straight line (checked: objdump -d at -O2):
 * parse_mode(): zlib's gz_open: a loop over a mode string whose switch loads
 * its table's address once, before the loop, in a function that calls out
 * before and after it (the calls clobber that register, none inside the loop).
 * kind_of(): jsoncpp's Value::asInt: the switch compares a byte in memory,
 * stores into its own stack frame, then reads the byte again.
 * Counts: main runs each over fixed inputs (see the expects). */
#include <stdio.h>
#include <string.h>

/* expect: main 1 */
/* expect: parse_mode 40 */
/* expect: mode_begin 40 */
/* expect: mode_end 40 */
/* expect: kind_of 300 */
/* expect: kind_use 300 */

volatile long sink;

struct mode { int level, strategy, append, read, write, direct, exclusive, cloexec; };

__attribute__((noipa)) void mode_begin(struct mode *m) { memset(m, 0, sizeof *m); m->level = -1; }
__attribute__((noipa)) long mode_end(const struct mode *m) {
    return m->level * 1000 + m->strategy * 100 + m->append * 8 + m->read * 4 + m->write * 2 + m->direct +
           m->exclusive * 16 + m->cloexec * 32;
}

__attribute__((noipa)) long parse_mode(const char *s)
{
    struct mode m;
    mode_begin(&m);
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9')
            m.level = *s - '0';
        else
            switch (*s) {
            case 'r': m.read = 1; break;
            case 'w': m.write = 1; break;
            case 'a': m.append = 1; break;
            case '+': m.read = m.write = 1; break;
            case 'f': m.strategy = 1; break;
            case 'h': m.strategy = 2; break;
            case 'R': m.strategy = 3; break;
            case 'F': m.strategy = 4; break;
            case 'T': m.direct = 1; break;
            case 'x': m.exclusive = 1; break;
            case 'e': m.cloexec = 1; break;
            default: break;
            }
    }
    return mode_end(&m);
}

struct obj { long pad; unsigned char kind; long v; };

__attribute__((noipa)) long kind_use(const long *frame, long n) { return frame[0] + frame[1] + n; }

__attribute__((noipa)) long kind_of(const struct obj *o)
{
    long frame[2] = {0x1234, 0x5678};
    long n;
    switch (o->kind) {
    case 0: n = 0; break;
    case 1: n = o->v; break;
    case 2: n = o->v * 2; break;
    case 3: n = -o->v; break;
    case 4: n = o->v + 7; break;
    case 5: n = o->v ^ 0x55; break;
    default: n = 99; break;
    }
    return kind_use(frame, n);
}

int main(void)
{
    static const char *modes[] = {"rb", "wb9", "ab6f", "r+bh", "wbR", "w1F", "rT", "wx", "re", "w9e"};
    long total = 0;
    for (int k = 0; k < 40; k++)
        total += parse_mode(modes[k % 10]);
    for (int k = 0; k < 300; k++) {
        struct obj o = {k, (unsigned char)(k % 8), k};
        total += kind_of(&o);
    }
    printf("total %ld\n", total);
    return 0;
}
