/* For the bad-input tests: creates the file named by argv[1], so the harness
 * can tell whether the program ran. */
#include <stdio.h>

/* args: {scratch}/marker.out */
/* expect: main 1 */
/* expect: touch 1 */

__attribute__((noipa)) int touch(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fputs("ran\n", f);
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        puts("usage: marker FILE");
        return 2;
    }
    int r = touch(argv[1]);
    puts("marker written");
    return r;
}
