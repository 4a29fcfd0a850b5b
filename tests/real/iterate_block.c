/* For attach: a thread blocks inside a dl_iterate_phdr callback (holding the
 * loader's lock) until SIGUSR1.  dlopen in this process would wait for that
 * lock for ever, so an attached lazyprobe must not load its GDB library here:
 * it says so and goes on.  Prints "ready" once the thread is in the callback,
 * "done" at the end. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int release[2];
static volatile sig_atomic_t go;
static volatile int inside;
volatile long sink;

static void on_usr1(int sig) {
  (void)sig;
  go = 1;
}

static int hold(struct dl_phdr_info *info, size_t size, void *data) {
  (void)info, (void)size, (void)data;
  inside = 1;
  char c;
  while (read(release[0], &c, 1) != 1) {}
  return 1; /* stop after the first object */
}

static void *holder(void *arg) {
  (void)arg;
  dl_iterate_phdr(hold, NULL);
  return NULL;
}

__attribute__((noipa)) long work(long i) { return i * 2 + 1; }

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  if (pipe(release) != 0) return 3;
  pthread_t t;
  pthread_create(&t, NULL, holder, NULL);
  while (!inside) usleep(1000);
  printf("ready\n");
  fflush(stdout);
  for (long i = 0; !go; i++) sink += work(i);
  if (write(release[1], "x", 1) != 1) return 4;
  pthread_join(t, NULL);
  printf("done\n");
  return 0;
}
