/* Switches gcc dispatches through a table in ways a matcher must follow past
 * the dispatch's own straight line (checked: objdump -d at -O2):
 * parse_mode(): zlib's gz_open: a loop over a mode string whose switch loads
 * its table's address once, before the loop, in a function that calls out
 * before and after it (the calls clobber that register, none inside the loop).
 * classify(): jsoncpp's Reader::readToken: gcc splits a switch on a byte in
 * two (up to ':' and above it); the second's bound check is a jbe into its
 * dispatch, where no instruction falls through.
 * kind_of(): jsoncpp's Value::asInt: the switch compares a byte in memory,
 * stores into its own stack frame, then reads the byte again.
 * order(): jsoncpp's Value::operator<: the switch compares the low byte of a
 * copy (mov %rax, %rdx; ...; cmp $7, %dl) of a zero-extended byte.
 * token(): jsoncpp's readToken again, as -O0 has it: the table's lea lies on
 * the dispatch's straight line, which a branch alone enters (jmp before it).
 * Counts: main runs each over fixed inputs (see the expects). */
#include <stdio.h>
#include <string.h>

/* expect: main 1 */
/* expect: parse_mode 40 */
/* expect: mode_begin 40 */
/* expect: mode_end 40 */
/* expect: classify 2000 */
/* expect: kind_of 300 */
/* expect: kind_use 300 */
/* expect: order 300 */
/* expect: token 53 */
/* expect: token_skip 53 */
/* expect: token_next 53 */
/* expect: order_helper 24 */

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

__attribute__((noipa)) int classify(const unsigned char *p)
{
    unsigned char c = *p;
    if (c <= ':') {
        switch (c) {
        case '"': return 1;
        case '/': return 2;
        case '-': case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9': return 3;
        case ',': return 4;
        case ':': return 5;
        case ' ': case '\t': case '\n': return 6;
        default: return 0;
        }
    }
    switch (c) {
    case '[': return 7;
    case ']': return 8;
    case '{': return 9;
    case '}': return 10;
    case 't': return 11;
    case 'f': return 12;
    case 'n': return 13;
    default: return 0;
    }
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

__attribute__((noipa)) long order_helper(long a) { sink += a; return a; }

__attribute__((noipa)) int order(const struct obj *x, const struct obj *y)
{
    int delta = x->kind - y->kind;
    if (delta)
        return delta < 0;
    switch (x->kind) {
    case 0: return 0;
    case 1: return x->v < y->v;
    case 2: return order_helper(x->v) < y->v;
    case 3: return x->v > y->v;
    case 4: return (x->v ^ 1) < y->v;
    case 5: return order_helper(y->v) > x->v;
    case 6: return x->v * 2 < y->v;
    case 7: return x->v + 3 < y->v;
    }
    return 0;
}

__attribute__((noipa)) int token_skip(void) { return 0; }
__attribute__((noipa)) char token_next(const char *p) { return *p; }

__attribute__((noipa)) int token(const char *p)
{
    token_skip();
    char c = token_next(p);
    switch (c) {
    case '{': return 1;
    case '}': return 2;
    case '[': return 3;
    case ']': return 4;
    case '"': return 5;
    case '/': return 6;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9': case '-':
        return 7;
    case 't': return 8;
    case 'f': return 9;
    case 'n': return 10;
    case ',': return 11;
    case ':': return 12;
    case 0: return 13;
    default: return 0;
    }
}

int main(void)
{
    static const char *modes[] = {"rb", "wb9", "ab6f", "r+bh", "wbR", "w1F", "rT", "wx", "re", "w9e"};
    long total = 0;
    for (int k = 0; k < 40; k++)
        total += parse_mode(modes[k % 10]);
    static const char text[] = "{\"a\": [1, -2, true, false, null], \"b\": {\"c\": \"d\"}} /x";
    for (int k = 0; k < 2000; k++)
        total += classify((const unsigned char *)text + k % (sizeof text - 1));
    for (int k = 0; text[k]; k++)
        total += token(text + k);
    for (int k = 0; k < 300; k++) {
        struct obj o = {k, (unsigned char)(k % 8), k};
        total += kind_of(&o);
        struct obj p = {k, (unsigned char)((k + (k % 3 != 0)) % 8), k * 7 % 11};
        total += order(&o, &p);
    }
    printf("total %ld\n", total);
    return 0;
}
