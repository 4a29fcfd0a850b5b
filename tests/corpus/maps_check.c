/* Security: prints a verdict about its own /proc/self/maps: no mapping that
 * is both writable and executable, and no executable mapping of a file under
 * the directory given as argv[1] (the lazyprobe output directory).  Offending
 * lines are printed to stdout, so any difference shows up in the diff.  The
 * check runs after several functions have run (and been instrumented). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* args: {outdir} */
/* expect: main 1 */
/* expect: warm 30 */
/* expect: check_maps 1 */
/* expect: verdict 2 */

volatile long acc;

__attribute__((noipa)) void warm(int i) { acc += i; }

__attribute__((noipa)) void verdict(const char *what, int bad)
{
    printf("%s: %s\n", what, bad ? "FOUND" : "none");
}

__attribute__((noipa)) void check_maps(const char *dir)
{
    char real[PATH_MAX] = "";
    if (dir && !realpath(dir, real))
        snprintf(real, sizeof real, "%s", dir);
    size_t rl = strlen(real);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        puts("cannot open /proc/self/maps");
        return;
    }
    char line[4096];
    int wx = 0, fromdir = 0;
    while (fgets(line, sizeof line, f)) {
        char perms[8] = "";
        char path[4096] = "";
        if (sscanf(line, "%*s %7s %*s %*s %*s %4095[^\n]", perms, path) < 1)
            continue;
        if (perms[1] == 'w' && perms[2] == 'x') {
            wx++;
            printf("W+X %s", line);
        }
        if (perms[2] == 'x' && rl > 0 && strncmp(path, real, rl) == 0 &&
            (path[rl] == '/' || path[rl] == '\0')) {
            fromdir++;
            printf("EXEC-FROM-DIR %s", line);
        }
    }
    fclose(f);
    verdict("writable+executable mappings", wx);
    verdict("executable mappings from output dir", fromdir);
}

int main(int argc, char **argv)
{
    for (int i = 0; i < 30; i++)
        warm(i);
    check_maps(argc > 1 ? argv[1] : NULL);
    return 0;
}
