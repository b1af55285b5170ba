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
static int inside, release_it, gp_done;

static void *read_once_then_exit(void *arg)
{
	struct srcu_struct *sp = arg;

	srcu_read_unlock(sp, srcu_read_lock(sp));
	return NULL;
}

static void *hold_section(void *arg)
{
	int idx = srcu_read_lock(&dom);

	(void)arg;
	flag_set(&inside);
	flag_wait(&release_it);
	srcu_read_unlock(&dom, idx);
	return NULL;
}

static void *gp(void *arg)
{
	(void)arg;
	synchronize_srcu(&dom);
	flag_set(&gp_done);
	return NULL;
}

/* A new thread (on a reused record, after before() ran in an exited
 * thread) holds a section of dom: the grace period must wait for it. */
static void waits_for_new_reader(struct srcu_struct *before)
{
	pthread_t r, g;

	if (before)
		join(spawn(read_once_then_exit, before));
	inside = release_it = gp_done = 0;
	r = spawn(hold_section, NULL);
	flag_wait(&inside);
	g = spawn(gp, NULL);
	sleep_ms(20);
	CHECK(!flag_get(&gp_done));
	flag_set(&release_it);
	join(r);
	join(g);
	CHECK(flag_get(&gp_done));
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
