/* jumpin_main.c — drives jumpin.S.  "cold": hot(200) first (the part is
 * entered at its start), then hot(-1) (2 bytes inside it), then hot(5);
 * "inside": leaf is called (and patched), then jumper lands inside leaf's
 * first bytes, then leaf is called again.  Prints what each returned. */
#include <stdio.h>
#include <string.h>

int hot(int x);
int leaf(int x);
int jumper(void);

int main(int argc, char **argv) {
  long sum = 0;
  if (argc > 1 && !strcmp(argv[1], "cold")) {
    for (int i = 0; i < 30; i++) sum += hot(200 + i);
    for (int i = 0; i < 20; i++) sum += hot(-1 - i);
    for (int i = 0; i < 10; i++) sum += hot(i);
  } else {
    for (int i = 0; i < 25; i++) sum += leaf(i);
    for (int i = 0; i < 15; i++) sum += jumper();
    for (int i = 0; i < 25; i++) sum += leaf(i);
  }
  printf("%ld\n", sum);
  return 0;
}
