/*
 * test_reader_sets: a grace period scans only its domain's reader set
 * (doc/design.md, "Reader sets"), and must still wait for every reader.
 *
 * Bugs caught:
 *  - a thread's first section of a domain not waited for (the note on the
 *    first lock missing, or its record left out of the scan);
 *  - a record reused by a new thread after its old owner read the domain:
 *    if the exit cleared the record's set bit but left its lock words
 *    marked noted, the new owner's first lock would not note it, and a
 *    grace period would end while it is inside (the reader below);
 *  - the same for a record whose old owner read another domain only.
 * Each case holds a reader inside and requires synchronize_srcu() still
 * blocked 20 ms later; the fence backend runs it too (ctest .fence).
 */
#include "check.h"

static struct srcu_struct dom, other;

static void *read_once_then_exit(void *arg)
{
	struct srcu_struct *sp = arg;

	srcu_read_unlock(sp, srcu_read_lock(sp));
	return NULL;
}

/* A new thread (on a reused record, after before() ran in an exited
 * thread) holds a section of dom: the grace period must wait for it. */
static void waits_for_new_reader(struct srcu_struct *before)
{
	struct hold_arg h = { .sp = &dom };
	struct sync_arg a = { .sp = &dom };
	pthread_t r, g;

	if (before)
		join(spawn(read_once_then_exit, before));
	r = spawn(hold_thread, &h);
	flag_wait(&h.inside);
	g = spawn(sync_thread, &a);
	sleep_ms(20);
	CHECK(!flag_get(&a.done));
	flag_set(&h.release);
	join(r);
	join(g);
	CHECK(flag_get(&a.done));
}

int main(void)
{
	watchdog(60);
	REQUIRE(init_srcu_struct_named(&dom, "reader-sets") == 0);
	REQUIRE(init_srcu_struct_named(&other, "other") == 0);
	for (int i = 0; i < 20; i++) {
		waits_for_new_reader(NULL);
		waits_for_new_reader(&dom);
		waits_for_new_reader(&other);
	}
	REQUIRE(cleanup_srcu_struct(&dom) == 0);
	REQUIRE(cleanup_srcu_struct(&other) == 0);
	return check_report("test_reader_sets");
}
