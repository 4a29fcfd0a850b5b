/* For the fault tests: four threads each call t_work 25 times, then all
 * block (threads in pthread_cond_wait, main in sigsuspend); main prints
 * "READY pid=N" once every thread is blocked-to-be.  Without arguments the
 * program waits forever, so it dies of whatever signal it is sent.  With
 * "handle", SIGINT and SIGTERM set a flag: main then calls on_quit, prints
 * "bye" and exits with status 3 (threads still blocked).
 * Counts: t_work 100, worker 4, ready 1, on_quit 1 with "handle" (else 0),
 * never 0, main 1. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;
static volatile sig_atomic_t quit;
volatile long acc;

__attribute__((noipa)) void t_work(long i) { __atomic_fetch_add(&acc, i, __ATOMIC_RELAXED); }
__attribute__((noipa)) void never(void) { acc = -1; }
__attribute__((noipa)) void on_quit(int sig) { (void)sig; quit = 1; }
__attribute__((noipa)) void ready(void) {
  printf("READY pid=%d acc=%ld\n", (int)getpid(), (long)acc);
  fflush(stdout);
}

__attribute__((noipa)) void *worker(void *arg) {
  for (long i = 0; i < 25; i++) t_work(i + (long)arg);
  pthread_mutex_lock(&mu);
  started++;
  pthread_cond_broadcast(&cv);
  for (;;) pthread_cond_wait(&cv, &mu);   /* forever */
  return NULL;
}

int main(int argc, char **argv) {
  int handle = argc > 1 && !strcmp(argv[1], "handle");
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  if (handle) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_quit;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_sigmask(SIG_BLOCK, &block, &old);   /* threads inherit: main takes them */
  }
  pthread_t t[4];
  for (long k = 0; k < 4; k++) pthread_create(&t[k], NULL, worker, (void *)k);
  pthread_mutex_lock(&mu);
  while (started < 4) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  ready();
  if (!handle) {
    for (;;) pause();
    never();
  }
  while (!quit) sigsuspend(&old);
  printf("bye\n");
  fflush(stdout);
  exit(3);
}
