/*
 * probe_signal_tls.c: does the machine (or emulator) that runs a cross
 * build keep a thread's TLS where it was across its signal handlers?
 * scripts/check-cross.sh runs it before an emulated suite and, where the
 * answer is no, leaves out the tests whose threads take signals inside
 * sections, saying why.  Not a test of libsrcu: a program without it.
 *
 * The main thread counts through a pointer into its TLS taken once (as
 * libsrcu's srcu__slots is) while a signal handler counts through the
 * thread-pointer register (%gs on i386); both must land in one word.
 * Seen with qemu-i386 7.2: after the first signal the main thread's
 * counts go elsewhere (the handler's and a final TLS read agree with each
 * other, not with the pointer), so a section's unlock seems to lack its
 * lock.  qemu-x86_64, qemu-arm and every native run keep the one word.
 *
 * Exit status 0: kept; 1: lost (prints the counts); 2: could not run.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static __thread unsigned long counts;
static pthread_t main_thread;
static volatile int stop;
static unsigned long handled;

static void handler(int sig)
{
	(void)sig;
	__atomic_fetch_add(&counts, 1, __ATOMIC_RELAXED);   /* through the TLS register */
	handled++;
}

static void *signaller(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_kill(main_thread, SIGUSR1);
		usleep(50);
	}
	return NULL;
}

int main(void)
{
	unsigned long *mine = &counts, n = 5 * 1000 * 1000;
	pthread_t t;

	__asm__ volatile("" : "+r"(mine));   /* a pointer, as libsrcu keeps one */
	signal(SIGUSR1, handler);
	main_thread = pthread_self();
	if (pthread_create(&t, NULL, signaller, NULL) != 0)
		return 2;
	for (unsigned long i = 0; i < n; i++)
		__atomic_fetch_add(mine, 1, __ATOMIC_RELAXED);
	stop = 1;
	pthread_join(t, NULL);
	if (__atomic_load_n(&counts, __ATOMIC_RELAXED) == n + handled)
		return 0;
	printf("signal-tls probe: TLS moved under a signal handler: %lu counts in the thread's "
	       "word, %lu expected (%lu by the thread, %lu by %lu handlers)\n",
	       counts, n + handled, n, handled, handled);
	return 1;
}
