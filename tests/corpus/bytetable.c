/* Switches that gcc bounds with a narrow or a memory compare (check: objdump -d).
 * op_dispatch(): a switch on an unsigned char with 140 cases: at -O2/-O3 the
 *   bound is `cmp $0x8b,%dil` (or on another byte register), an 8-bit compare
 *   whose immediate is negative when read as signed; the index is the byte
 *   zero-extended (movzbl).
 * class_dispatch(): a switch on a byte read from a table, cls[*z]: at -O2/-O3
 *   the bound is a compare of the memory byte (`cmpb $0x9,(%rax,%rdx)`) and the
 *   index is the same byte loaded again (movzbl).
 * Input: op_dispatch(i % 140) for i = 0..279 -> every op case twice; and
 * class_dispatch over the 256 bytes 0..255, 3 times; cls[c] = c*7 % 10 for
 * c < 255 (25 of each class, one more of 0, 7, 4, 1, 8), cls[255] = 10. */
#include <stdio.h>

/* expect: main 1 */
/* expect: op_dispatch 280 */
/* expect: class_dispatch 768 */
/* expect: op_a 70 */
/* expect: op_b 70 */
/* expect: op_c 70 */
/* expect: op_d 70 */
/* expect: cls_0 78 */
/* expect: cls_1 78 */
/* expect: cls_2 75 */
/* expect: cls_3 75 */
/* expect: cls_4 78 */
/* expect: cls_5 75 */
/* expect: cls_6 75 */
/* expect: cls_7 78 */
/* expect: cls_8 78 */
/* expect: cls_9 75 */
/* expect: fallback 3 */

volatile long sink;
__attribute__((noipa)) long fallback(long x) { sink -= x; return -x; }
__attribute__((noipa)) long op_a(long x, long k) { sink += k; return x + k; }
__attribute__((noipa)) long op_b(long x, long k) { sink ^= k; return x - k; }
__attribute__((noipa)) long op_c(long x, long k) { sink |= k; return x * k; }
__attribute__((noipa)) long op_d(long x, long k) { sink &= k; return x ^ k; }
#define CLS(n) __attribute__((noipa)) long cls_##n(long x) { sink += n; return x + n; }
CLS(0) CLS(1) CLS(2) CLS(3) CLS(4) CLS(5) CLS(6) CLS(7) CLS(8) CLS(9)

#define C4(n) case n: r = op_a(x, n); break; case n + 1: r = op_b(x, n); break; \
              case n + 2: r = op_c(x, n); break; case n + 3: r = op_d(x, n); break;
#define C20(n) C4(n) C4(n + 4) C4(n + 8) C4(n + 12) C4(n + 16)

__attribute__((noipa)) long op_dispatch(unsigned char op, long x)
{
    long r;
    switch (op) {
    C20(0) C20(20) C20(40) C20(60) C20(80) C20(100) C20(120)
    default: r = fallback(x); break;
    }
    return r + 1;
}

/* class of each byte: 0..9 for 255 of them, 10 (the default) for byte 255 */
static unsigned char cls[256];

__attribute__((noipa)) long class_dispatch(const unsigned char *z, long x)
{
    switch (cls[*z]) {
    case 0: return cls_0(x);
    case 1: return cls_1(x);
    case 2: return cls_2(x);
    case 3: return cls_3(x);
    case 4: return cls_4(x);
    case 5: return cls_5(x);
    case 6: return cls_6(x);
    case 7: return cls_7(x);
    case 8: return cls_8(x);
    case 9: return cls_9(x);
    default: return fallback(x);
    }
}

int main(void)
{
    long a = 0, b = 0;
    for (int c = 0; c < 255; c++) cls[c] = (unsigned char)((c * 7) % 10);
    cls[255] = 10;
    for (long i = 0; i < 280; i++) a += op_dispatch((unsigned char)(i % 140), i);
    for (int round = 0; round < 3; round++)
        for (int c = 0; c < 256; c++) {
            unsigned char z = (unsigned char)c;
            b += class_dispatch(&z, c);
        }
    printf("a=%ld b=%ld sink=%ld\n", a, b, (long)sink);
    return 0;
}
