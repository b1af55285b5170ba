/*
 * peer_ck.c: Concurrency Kit's ck_epoch (epoch-based reclamation; every
 * reader thread registers a record).  Built only with libck-dev.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ck_epoch.h>
#include <pthread.h>
#include <stdlib.h>

#include "peers.h"

static ck_epoch_t epoch;
static pthread_once_t epoch_once = PTHREAD_ONCE_INIT;
static __thread ck_epoch_record_t *record;

static void epoch_init(void) { ck_epoch_init(&epoch); }

/* A record an exited thread unregistered, else a new one: without the
 * recycling, the records of every thread that ever read piled up, and
 * ck_epoch_synchronize() walks them all (figure 4's one-updater rate fell
 * from 10.9 M to 4.6 M to 2.9 M calls/s over a run's three rounds). */
static ck_epoch_record_t *my_record(void)
{
	if (!record) {
		pthread_once(&epoch_once, epoch_init);
		record = ck_epoch_recycle(&epoch, NULL);
		if (record)
			return record;
		record = calloc(1, sizeof(*record));
		if (!record)
			abort();
		ck_epoch_register(&epoch, record, NULL);
	}
	return record;
}

static void ck_online(void) { (void)my_record(); }

static void ck_offline(void)
{
	if (record) {
		ck_epoch_unregister(record);   /* my_record() recycles it */
		record = NULL;
	}
}

static void ck_reads(long n)
{
	ck_epoch_record_t *r = my_record();

	for (long i = 0; i < n; i++) {
		ck_epoch_begin(r, NULL);
		__asm__ __volatile__("" ::: "memory");
		ck_epoch_end(r, NULL);
	}
}

static int ck_lock(void) { ck_epoch_begin(my_record(), NULL); return 0; }
static void ck_unlock(int t) { (void)t; ck_epoch_end(my_record(), NULL); }
static void ck_sync(void) { ck_epoch_synchronize(my_record()); }

const struct peer peer_ck_epoch = {
	"ck_epoch", "Concurrency Kit ck_epoch (record per thread; synchronize spins)", 1,
	ck_online, ck_offline, ck_reads, ck_lock, ck_unlock, ck_sync, NULL, NULL,
};
