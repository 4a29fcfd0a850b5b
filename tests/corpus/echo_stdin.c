/* Reads stdin and echoes it transformed (rot13 on letters, upper-case
 * vowels) to stdout; a summary goes to stderr.  The harness feeds the file
 * named in the "stdin:" line below; it has 1000 bytes in 20 lines, so
 * transform() runs once per byte and line_done() once per newline. */
#include <stdio.h>

/* stdin: echo_stdin.input */
/* expect: main 1 */
/* expect: transform 1000 */
/* expect: line_done 20 */
/* expect: finish 1 */

__attribute__((noipa)) int transform(int c)
{
    if (c >= 'a' && c <= 'z')
        c = 'a' + (c - 'a' + 13) % 26;
    else if (c >= 'A' && c <= 'Z')
        c = 'A' + (c - 'A' + 13) % 26;
    if (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u')
        c -= 32;
    return c;
}

__attribute__((noipa)) void line_done(long *lines) { ++*lines; }

__attribute__((noipa)) void finish(long bytes, long lines)
{
    fprintf(stderr, "echo_stdin: %ld bytes, %ld lines\n", bytes, lines);
}

int main(void)
{
    long bytes = 0, lines = 0;
    int c;
    while ((c = getchar()) != EOF) {
        putchar(transform(c));
        bytes++;
        if (c == '\n')
            line_done(&lines);
    }
    finish(bytes, lines);
    return 0;
}
